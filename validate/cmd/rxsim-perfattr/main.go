// Command rxsim-perfattr attributes perf samples of the receive path to the
// model's cost items (see package perfattr):
//
//	perf record -a -g -F 4999 -o perf.data sleep 4   # while rxsim validate tcp-stream runs
//	perf script -i perf.data -F cpu,ip,sym > perf.txt
//	rxsim-perfattr [-fold out.folded] [-one-cpu N] perf.txt|stacks.folded[.gz]
//
// -one-cpu N sorts CPU N's samples as a run whose whole receive path ran
// there (rxsim validate tcp-stream --threaded-cpu N --reader-cpu N).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/rxsim/rxsim/validate/perfattr"
)

func main() {
	fold := flag.String("fold", "", "also write the stacks folded to this file")
	one := flag.Int("one-cpu", -1, "also sort this CPU's samples as the whole receive path of a threaded-NAPI run")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: rxsim-perfattr [-fold out.folded] [-one-cpu N] perf-script.txt|stacks.folded[.gz]")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *fold, *one); err != nil {
		fmt.Fprintln(os.Stderr, "rxsim-perfattr:", err)
		os.Exit(1)
	}
}

func run(in, fold string, one int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	stacks, err := perfattr.Read(f)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if fold != "" {
		out, err := os.Create(fold)
		if err != nil {
			return err
		}
		if err := perfattr.WriteFolded(out, stacks); err != nil {
			out.Close()
			return err
		}
		if err := out.Close(); err != nil {
			return err
		}
	}
	t := perfattr.Attribute(stacks, perfattr.Rules, perfattr.Contexts)
	t.Write(os.Stdout)
	r := perfattr.TCPReceiveOf(t)
	fmt.Printf("TCP receive %d samples, core+IP %d, ratio %.2f; sk_data_ready wake-ups %d\n", r.TCP, r.CoreIP, r.Ratio, r.Wake)
	sp := perfattr.TCPSplitOf(stacks)
	fmt.Printf("TCP receive split: tcp_v4_rcv own %d, tcp_v4_do_rcv %d in softirq + %d by the reader (backlog), tcp_add_backlog %d\n",
		sp.Own, sp.DoRcvSoftirq, sp.DoRcvReader, sp.AddBacklog)
	a := perfattr.ACKTxOf(stacks)
	fmt.Printf("pure ACK transmit: TCP/IP and allocation %d samples, device %d, nested softirq %d (not counted)\n", a.TCPIP, a.Dev, a.Nested)
	if one >= 0 {
		o := perfattr.OneCPUOf(t, one)
		fmt.Printf("cpu%d as the whole receive path: core+IP %d; above it %.2f x core+IP (TCP %d, wake-ups %d, copy %d, rest of tcp_recvmsg %d); veth driver %d, veth skb copy %d, sender's work and unattributed %d, of %d\n",
			one, o.CoreIP, o.AboveRatio(), o.TCP, o.Wake, o.Copy, o.Recvmsg, o.Driver, o.VethCopy, o.Rest, o.Total)
	}
	return nil
}
