package validate

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Addresses of the harness: RFC 2544 benchmarking range 198.18.0.0/15 only.
var (
	SenderIP   = net.IPv4(198, 18, 0, 1).To4()
	ReceiverIP = net.IPv4(198, 18, 0, 2).To4()
	SenderMAC  = net.HardwareAddr{0x02, 0x00, 0xc6, 0x12, 0x00, 0x01}
	// ReceiverMAC is the receiving veth's address, the frames' destination.
	ReceiverMAC = net.HardwareAddr{0x02, 0x00, 0xc6, 0x12, 0x00, 0x02}
)

// Prefix starts the name of every namespace and link validate creates.
const Prefix = "rxsim"

// harnessMu serialises harnesses in one process: their names carry only the PID.
var harnessMu sync.Mutex

// NetnsName returns the name of a harness namespace ("snd" or "rcv") of pid.
func NetnsName(pid int, role string) string { return fmt.Sprintf("%s-%d-%s", Prefix, pid, role) }

// LinkName returns the name of a harness veth end ('s' sender, 'r' receiver)
// of pid; at most 15 bytes for PIDs below 10^8.
func LinkName(pid int, role byte) string { return fmt.Sprintf("%s%d%c", Prefix, pid, role) }

// NetSettings are the per-device settings of the receiving end.
type NetSettings struct {
	GRO               bool   `json:"gro"`                  // ethtool -K rcv gro on
	SenderTxCsumOff   bool   `json:"sender_tx_csum_off"`   // ethtool -K snd tx off (cpumap + sockets)
	Threaded          bool   `json:"threaded"`             // /sys/class/net/rcv/threaded = 1
	ThreadedCPU       int    `json:"threaded_cpu"`         // pin the napi/rcv-* kthread here (-1: leave)
	GROFlushTimeout   int    `json:"gro_flush_timeout"`    // ns
	NapiDeferHardIrqs int    `json:"napi_defer_hard_irqs"` //
	RPSCPUs           string `json:"rps_cpus,omitempty"`   // hex mask for queues/rx-0/rps_cpus
}

// Harness is a pair of network namespaces joined by a veth pair, or (when
// External) a real interface in the current namespace.
type Harness struct {
	External   bool
	PID        int
	SndNs      string // namespace names (empty when External)
	RcvNs      string
	Snd, Rcv   string // link names
	SndIfindex int
	RcvIfindex int
	Driver     string

	sndNs, rcvNs netns.NsHandle
	hSnd, hRcv   *netlink.Handle
	ethSnd       *ethtoolSock
	ethRcv       *ethtoolSock
	snmp         *os.File
	links        []link.Link
	XDPMode      string // "native" or "skb" once attached
	closed       bool
}

// NewHarness creates the namespaces and the veth pair, addresses, static
// neighbours, and brings everything up.
func NewHarness() (h *Harness, err error) {
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	harnessMu.Lock()
	pid := os.Getpid()
	h = &Harness{PID: pid, SndNs: NetnsName(pid, "snd"), RcvNs: NetnsName(pid, "rcv"),
		Snd: LinkName(pid, 's'), Rcv: LinkName(pid, 'r'), sndNs: -1, rcvNs: -1}
	defer func() {
		if err != nil {
			h.Close()
		}
	}()
	// Remove leftovers of an earlier harness of this very process.
	netns.DeleteNamed(h.SndNs)
	netns.DeleteNamed(h.RcvNs)
	if h.sndNs, err = newNamedNetns(h.SndNs); err != nil {
		return h, err
	}
	if h.rcvNs, err = newNamedNetns(h.RcvNs); err != nil {
		return h, err
	}
	if h.hSnd, err = netlink.NewHandleAt(h.sndNs); err != nil {
		return h, fmt.Errorf("validate: netlink handle: %w", err)
	}
	if h.hRcv, err = netlink.NewHandleAt(h.rcvNs); err != nil {
		return h, fmt.Errorf("validate: netlink handle: %w", err)
	}
	veth := &netlink.Veth{
		LinkAttrs:        netlink.LinkAttrs{Name: h.Snd, HardwareAddr: SenderMAC, MTU: 1500, TxQLen: 1000},
		PeerName:         h.Rcv,
		PeerHardwareAddr: ReceiverMAC,
		PeerNamespace:    netlink.NsFd(h.rcvNs),
	}
	if err = h.hSnd.LinkAdd(veth); err != nil {
		return h, fmt.Errorf("validate: create veth %s/%s: %w", h.Snd, h.Rcv, err)
	}
	for _, side := range []struct {
		hd       *netlink.Handle
		name     string
		ip, peer net.IP
		peerMAC  net.HardwareAddr
		ifindex  *int
	}{
		{h.hSnd, h.Snd, SenderIP, ReceiverIP, ReceiverMAC, &h.SndIfindex},
		{h.hRcv, h.Rcv, ReceiverIP, SenderIP, SenderMAC, &h.RcvIfindex},
	} {
		lo, err := side.hd.LinkByName("lo")
		if err != nil {
			return h, fmt.Errorf("validate: lo: %w", err)
		}
		if err := side.hd.LinkSetUp(lo); err != nil {
			return h, fmt.Errorf("validate: lo up: %w", err)
		}
		l, err := side.hd.LinkByName(side.name)
		if err != nil {
			return h, fmt.Errorf("validate: %s: %w", side.name, err)
		}
		*side.ifindex = l.Attrs().Index
		addr := &netlink.Addr{IPNet: &net.IPNet{IP: side.ip, Mask: net.CIDRMask(30, 32)}}
		if err := side.hd.AddrAdd(l, addr); err != nil {
			return h, fmt.Errorf("validate: address on %s: %w", side.name, err)
		}
		if err := side.hd.LinkSetUp(l); err != nil {
			return h, fmt.Errorf("validate: %s up: %w", side.name, err)
		}
		n := &netlink.Neigh{LinkIndex: l.Attrs().Index, Family: netlink.FAMILY_V4, State: netlink.NUD_PERMANENT,
			IP: side.peer, HardwareAddr: side.peerMAC}
		if err := side.hd.NeighSet(n); err != nil {
			return h, fmt.Errorf("validate: neighbour on %s: %w", side.name, err)
		}
	}
	if h.ethSnd, err = newEthtoolSock(h.sndNs); err != nil {
		return h, err
	}
	if h.ethRcv, err = newEthtoolSock(h.rcvNs); err != nil {
		return h, err
	}
	h.Driver, _, _ = h.ethRcv.drvInfo(h.Rcv)
	err = inNetns(h.rcvNs, func() error {
		var err error
		h.snmp, err = os.Open("/proc/thread-self/net/snmp")
		return err
	})
	if err != nil {
		return h, fmt.Errorf("validate: open snmp in %s: %w", h.RcvNs, err)
	}
	return h, nil
}

// NewExternal wraps a real interface of the current namespace. It refuses an
// interface that already has an XDP program or carries the default route,
// unless force.
func NewExternal(iface string, force bool) (*Harness, error) {
	if err := checkPrivileges(); err != nil {
		return nil, err
	}
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return nil, usageErr("--iface %s: %v", iface, err)
	}
	if !force {
		if x := l.Attrs().Xdp; x != nil && (x.Attached || x.ProgId != 0) {
			return nil, refusedErr("%s already has an XDP program (id %d); use --force to replace it", iface, x.ProgId)
		}
		routes, err := netlink.RouteList(nil, netlink.FAMILY_ALL)
		if err == nil {
			for _, r := range routes {
				if r.LinkIndex == l.Attrs().Index && (r.Dst == nil || r.Dst.IP.IsUnspecified() && isZeroMask(r.Dst.Mask)) {
					return nil, refusedErr("%s carries the default route; use --force to attach anyway", iface)
				}
			}
		}
	}
	harnessMu.Lock()
	h := &Harness{External: true, PID: os.Getpid(), Rcv: iface, RcvIfindex: l.Attrs().Index, sndNs: -1, rcvNs: -1}
	if h.rcvNs, err = netns.Get(); err != nil {
		h.Close()
		return nil, err
	}
	if h.hRcv, err = netlink.NewHandleAt(h.rcvNs); err != nil {
		h.Close()
		return nil, err
	}
	if h.ethRcv, err = newEthtoolSock(h.rcvNs); err != nil {
		h.Close()
		return nil, err
	}
	h.Driver, _, _ = h.ethRcv.drvInfo(iface)
	if h.snmp, err = os.Open("/proc/thread-self/net/snmp"); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

func isZeroMask(m net.IPMask) bool {
	for _, b := range m {
		if b != 0 {
			return false
		}
	}
	return true
}

func newNamedNetns(name string) (netns.NsHandle, error) {
	var ns netns.NsHandle = -1
	errc := make(chan error, 1)
	go func() {
		// NewNamed moves this thread into the new namespace; the thread is
		// discarded afterwards (never unlocked).
		runtime.LockOSThread()
		var err error
		ns, err = netns.NewNamed(name)
		if err != nil {
			errc <- fmt.Errorf("validate: create netns %s: %w", name, err)
			return
		}
		// No IPv6: its autoconfiguration (RS, MLD, DAD) would add packets
		// that the counters would see. /proc/sys follows the opener's netns.
		for _, f := range []string{"all", "default"} {
			os.WriteFile("/proc/sys/net/ipv6/conf/"+f+"/disable_ipv6", []byte("1"), 0)
		}
		errc <- nil
	}()
	return ns, <-errc
}

// AttachXDP attaches prog to the receiving interface in native mode, or in
// generic (skb) mode when generic is set.
func (h *Harness) AttachXDP(prog *ebpf.Program, generic bool) error {
	flags := link.XDPDriverMode
	h.XDPMode = "native"
	if generic {
		flags = link.XDPGenericMode
		h.XDPMode = "skb"
	}
	return h.attach(h.rcvNs, prog, h.RcvIfindex, flags, h.Rcv)
}

// AttachSenderXDP attaches prog natively to the sending veth end (the sink
// for XDP_TX).
func (h *Harness) AttachSenderXDP(prog *ebpf.Program) error {
	return h.attach(h.sndNs, prog, h.SndIfindex, link.XDPDriverMode, h.Snd)
}

func (h *Harness) attach(ns netns.NsHandle, prog *ebpf.Program, ifindex int, flags link.XDPAttachFlags, name string) error {
	var l link.Link
	err := inNetns(ns, func() error {
		var err error
		l, err = link.AttachXDP(link.XDPOptions{Program: prog, Interface: ifindex, Flags: flags})
		return err
	})
	if err != nil {
		return attachErr(fmt.Sprintf("XDP to %s", name), err)
	}
	h.links = append(h.links, l)
	return nil
}

// Configure applies the settings. Threaded NAPI needs veth NAPI, so call it
// after AttachXDP (or with GRO on).
func (h *Harness) Configure(s NetSettings) error {
	if h.External {
		return nil
	}
	if err := h.ethRcv.SetGRO(h.Rcv, s.GRO); err != nil {
		return err
	}
	if s.SenderTxCsumOff {
		if err := h.ethSnd.SetTxCsum(h.Snd, false); err != nil {
			return err
		}
	}
	dir := "/sys/class/net/" + h.Rcv + "/"
	return inNetnsSysfs(h.rcvNs, func() error {
		w := func(file, val string) error {
			if err := os.WriteFile(dir+file, []byte(val), 0); err != nil {
				return fmt.Errorf("validate: write %s=%s in %s: %w", file, val, h.RcvNs, err)
			}
			return nil
		}
		if err := w("gro_flush_timeout", strconv.Itoa(s.GROFlushTimeout)); err != nil {
			return err
		}
		if err := w("napi_defer_hard_irqs", strconv.Itoa(s.NapiDeferHardIrqs)); err != nil {
			return err
		}
		if s.RPSCPUs != "" {
			if err := w("queues/rx-0/rps_cpus", s.RPSCPUs); err != nil {
				return err
			}
		}
		if s.Threaded {
			if err := w("threaded", "1"); err != nil {
				return err
			}
		}
		return nil
	})
}

// PinNapiThread pins the threaded-NAPI kthread of the receiving device to cpu.
// It returns the kthread PIDs.
func (h *Harness) PinNapiThread(cpu int) ([]int, error) {
	want := "napi/" + h.Rcv + "-"
	if len(want) > 15 {
		want = want[:15] // TASK_COMM_LEN - 1
	}
	var pids []int
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		pids = findComm(want)
		if len(pids) > 0 {
			break
		}
	}
	if len(pids) == 0 {
		return nil, fmt.Errorf("validate: no threaded NAPI kthread %q found", want)
	}
	var set unix.CPUSet
	set.Set(cpu)
	for _, p := range pids {
		if err := unix.SchedSetaffinity(p, &set); err != nil {
			return pids, fmt.Errorf("validate: pin napi kthread %d to CPU %d: %w", p, cpu, err)
		}
	}
	return pids, nil
}

func findComm(prefix string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "comm"))
		if err != nil {
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(string(b)), prefix) {
			out = append(out, pid)
		}
	}
	return out
}

// LinkStats returns the kernel interface statistics of a harness link.
func (h *Harness) LinkStats(receiver bool) (*netlink.LinkStatistics, error) {
	hd, name := h.hRcv, h.Rcv
	if !receiver {
		if h.External {
			return &netlink.LinkStatistics{}, nil
		}
		hd, name = h.hSnd, h.Snd
	}
	l, err := hd.LinkByName(name)
	if err != nil {
		return nil, err
	}
	if l.Attrs().Statistics == nil {
		return &netlink.LinkStatistics{}, nil
	}
	return l.Attrs().Statistics, nil
}

// EthtoolStats returns `ethtool -S` of the receiving interface.
func (h *Harness) EthtoolStats() (map[string]uint64, error) { return h.ethRcv.Stats(h.Rcv) }

// SNMP reads /proc/net/snmp of the receiving namespace.
func (h *Harness) SNMP() (SNMP, error) {
	if _, err := h.snmp.Seek(0, 0); err != nil {
		return nil, err
	}
	return ParseSNMP(h.snmp)
}

// SendNs and RecvNs return the namespace handles (for generators and listeners).
func (h *Harness) SendNs() netns.NsHandle { return h.sndNs }

// RecvNs returns the receiving namespace.
func (h *Harness) RecvNs() netns.NsHandle { return h.rcvNs }

// Close detaches every program and removes the links and namespaces.
func (h *Harness) Close() error {
	if h == nil || h.closed {
		return nil
	}
	h.closed = true
	defer harnessMu.Unlock()
	var errs []error
	for _, l := range h.links {
		if err := l.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	h.links = nil
	if h.snmp != nil {
		h.snmp.Close()
	}
	h.ethSnd.close()
	h.ethRcv.close()
	if !h.External {
		if h.hSnd != nil {
			if l, err := h.hSnd.LinkByName(h.Snd); err == nil {
				if err := h.hSnd.LinkDel(l); err != nil {
					errs = append(errs, err)
				}
			}
		}
		for _, n := range []string{h.SndNs, h.RcvNs} {
			if err := netns.DeleteNamed(n); err != nil && !errors.Is(err, os.ErrNotExist) && !errors.Is(err, unix.ENOENT) {
				errs = append(errs, fmt.Errorf("validate: delete netns %s: %w", n, err))
			}
		}
	}
	for _, hd := range []*netlink.Handle{h.hSnd, h.hRcv} {
		if hd != nil {
			hd.Close()
		}
	}
	for _, ns := range []netns.NsHandle{h.sndNs, h.rcvNs} {
		if ns >= 0 {
			ns.Close()
		}
	}
	return errors.Join(errs...)
}
