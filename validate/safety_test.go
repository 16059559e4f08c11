package validate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cilium/ebpf/link"
	"github.com/vishvananda/netlink"
)

const childEnv = "RXSIM_VALIDATE_TEST_CHILD"

// TestMain lets the test binary act as a `rxsim validate` child process.
func TestMain(m *testing.M) {
	if args := os.Getenv(childEnv); args != "" {
		err := CLI(os.Stdout, os.Stderr, strings.Fields(args))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
		os.Exit(ExitCode(err))
	}
	os.Exit(m.Run())
}

func rxsimNetns(pid int) []string {
	var out []string
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), fmt.Sprintf("%s-%d-", Prefix, pid)) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestSIGKILLThenCleanup kills a running `rxsim validate` with SIGKILL and
// shows that the next start's cleanup leaves no rxsim namespace, link or XDP
// program of it.
func TestSIGKILLThenCleanup(t *testing.T) {
	requireBPF(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	progsBefore, _ := LoadedPrograms()
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=veth-xdp-drop --gen afpacket --duration 30s --reps 1 --no-ref --no-probe --quiet")
	cmd.Stdout, cmd.Stderr = io.Discard, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Wait until the child has its namespaces and its XDP program attached.
	attached := false
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && !attached; time.Sleep(50 * time.Millisecond) {
		if len(rxsimNetns(pid)) < 2 {
			continue
		}
		progs, _ := LoadedPrograms()
		for id, name := range progs {
			if _, old := progsBefore[id]; !old && name == "rxsim_drop" {
				attached = true
			}
		}
	}
	if !attached {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatal("child never attached its XDP program")
	}
	time.Sleep(300 * time.Millisecond) // traffic running
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if got := rxsimNetns(pid); len(got) != 2 {
		t.Fatalf("after SIGKILL expected the child's 2 namespaces to remain, got %v", got)
	}
	// The next start (here: --cleanup, which every run does first).
	var out strings.Builder
	if err := CLI(&out, io.Discard, []string{"--cleanup"}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), NetnsName(pid, "rcv")) {
		t.Errorf("cleanup output does not name the dead namespaces:\n%s", out.String())
	}
	if got := rxsimNetns(pid); len(got) != 0 {
		t.Errorf("namespaces left after cleanup: %v", got)
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, fmt.Sprintf("%s%d", Prefix, pid)) {
			t.Errorf("link left after cleanup: %s", l.Attrs().Name)
		}
	}
	// Programs go with the namespaces' devices (asynchronously).
	var left []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		left = left[:0]
		progs, _ := LoadedPrograms()
		for id, name := range progs {
			if _, old := progsBefore[id]; !old && name == "rxsim_drop" {
				left = append(left, fmt.Sprintf("%s(id %d)", name, id))
			}
		}
		if len(left) == 0 {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("XDP programs of the killed child still loaded: %v", left)
	}
	if l := FindLeftovers(false); len(l) != 0 {
		t.Errorf("leftovers remain: %v", l)
	}
}

// TestRefuseIfaceWithXDP shows the refusal of an interface that already has
// an XDP program, and of the one carrying the default route.
func TestRefuseIfaceWithXDP(t *testing.T) {
	requireBPF(t)
	pid := os.Getpid()
	a, b := LinkName(pid, 'x'), LinkName(pid, 'y')
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a}, PeerName: b}
	if err := netlink.LinkAdd(veth); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if l, err := netlink.LinkByName(a); err == nil {
			netlink.LinkDel(l)
		}
	}()
	l, err := netlink.LinkByName(a)
	if err != nil {
		t.Fatal(err)
	}
	x, err := LoadXDP(XDPSpec{Program: ProgPass})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	xl, err := link.AttachXDP(link.XDPOptions{Program: x.Prog, Interface: l.Attrs().Index, Flags: link.XDPGenericMode})
	if err != nil {
		t.Fatal(err)
	}
	defer xl.Close()

	_, err = Run(context.Background(), Options{Iface: a, Duration: time.Second, Reps: 1})
	if !errors.Is(err, ErrRefused) || ExitCode(err) != ExitRefused {
		t.Fatalf("Run on %s with an XDP program: err %v (exit %d), want refusal (exit %d)", a, err, ExitCode(err), ExitRefused)
	}
	t.Log(err)
	// Through the CLI: the exit code is distinct.
	err = CLI(io.Discard, io.Discard, []string{"--iface", a, "--duration", "1s", "--reps", "1"})
	if ExitCode(err) != ExitRefused {
		t.Fatalf("CLI exit %d (%v), want %d", ExitCode(err), err, ExitRefused)
	}
	// Our program is still the one attached.
	l, _ = netlink.LinkByName(a)
	info, _ := x.Prog.Info()
	id, _ := info.ID()
	if l.Attrs().Xdp == nil || l.Attrs().Xdp.ProgId != uint32(id) {
		t.Errorf("refusal touched the interface: xdp %+v", l.Attrs().Xdp)
	}

	routes, _ := netlink.RouteList(nil, netlink.FAMILY_V4)
	for _, r := range routes {
		if r.Dst == nil && r.LinkIndex > 0 {
			dl, err := netlink.LinkByIndex(r.LinkIndex)
			if err != nil || (dl.Attrs().Xdp != nil && dl.Attrs().Xdp.Attached) {
				continue
			}
			_, err = Run(context.Background(), Options{Iface: dl.Attrs().Name, Duration: time.Second, Reps: 1})
			if !errors.Is(err, ErrRefused) {
				t.Errorf("Run on default-route interface %s: %v, want refusal", dl.Attrs().Name, err)
			}
			break
		}
	}
}

// TestSIGINTRemovesEverything interrupts a running `rxsim validate` with
// SIGINT and shows that it removes its namespaces and programs itself.
func TestSIGINTRemovesEverything(t *testing.T) {
	requireBPF(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=veth-xdp-drop --gen udp --duration 30s --reps 1 --no-ref --no-probe --quiet")
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline) && len(rxsimNetns(pid)) < 2; time.Sleep(50 * time.Millisecond) {
	}
	time.Sleep(500 * time.Millisecond)
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("child did not exit within 10 s of SIGINT")
	}
	if got := rxsimNetns(pid); len(got) != 0 {
		t.Errorf("namespaces left after SIGINT: %v", got)
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if strings.HasPrefix(l.Attrs().Name, fmt.Sprintf("%s%d", Prefix, pid)) {
			t.Errorf("link left after SIGINT: %s", l.Attrs().Name)
		}
	}
}
