package validate

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// GenKind names a traffic generator.
type GenKind string

// The generators.
const (
	GenLive     GenKind = "live"     // BPF_PROG_RUN with BPF_F_TEST_XDP_LIVE_FRAMES, batches of 64
	GenAFPacket GenKind = "afpacket" // AF_PACKET SOCK_RAW, PACKET_QDISC_BYPASS, sendmmsg of 64
	GenUDP      GenKind = "udp"      // connected UDP sockets, sendmmsg of 64
)

// UDP ports of the generated traffic: the discard port, as pktgen.
const (
	DstPort  = 9
	BasePort = 9000 // source port of flow 0; flow i uses BasePort+i
	burst    = 64
	// MaxDuration bounds every traffic loop, whatever the options say.
	MaxDuration = 10 * time.Minute
)

// GenOptions configure a generator; the names follow pktgen.
type GenOptions struct {
	Kind     GenKind       `json:"gen"`
	PktSize  int           `json:"pkt_size"` // frame length without FCS
	Flows    int           `json:"flows"`    // UDP source ports BasePort..BasePort+Flows-1
	Rate     float64       `json:"rate_pps"` // 0 = unlimited
	Count    uint64        `json:"count"`    // 0 = until Duration
	CPU      int           `json:"gen_cpu"`
	Duration time.Duration `json:"-"`
}

func (o *GenOptions) check() error {
	switch o.Kind {
	case GenLive, GenAFPacket, GenUDP:
	default:
		return usageErr("unknown --gen %q (want live, afpacket or udp)", o.Kind)
	}
	if o.PktSize < 60 || o.PktSize > 1514 {
		return usageErr("pkt_size %d out of range 60..1514 (without FCS)", o.PktSize)
	}
	if o.Flows < 1 || o.Flows > 50000 {
		return usageErr("flows %d out of range 1..50000", o.Flows)
	}
	if o.Rate < 0 {
		return usageErr("rate %v < 0", o.Rate)
	}
	if o.CPU < 0 || o.CPU >= runtime.NumCPU() {
		return usageErr("generator CPU %d not in 0..%d", o.CPU, runtime.NumCPU()-1)
	}
	if o.Duration <= 0 || o.Duration > MaxDuration {
		return usageErr("traffic duration %v not in (0, %v]", o.Duration, MaxDuration)
	}
	return nil
}

// BuildFrame returns an Ethernet/IPv4/UDP frame of pktSize bytes (no FCS)
// from the harness sender to the receiver, UDP checksum 0 as pktgen.
func BuildFrame(pktSize int, srcPort uint16) []byte {
	f := make([]byte, pktSize)
	copy(f[0:6], ReceiverMAC)
	copy(f[6:12], SenderMAC)
	binary.BigEndian.PutUint16(f[12:], 0x0800)
	ip := f[14:34]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(pktSize-14))
	ip[8] = 64
	ip[9] = unix.IPPROTO_UDP
	copy(ip[12:16], SenderIP)
	copy(ip[16:20], ReceiverIP)
	binary.BigEndian.PutUint16(ip[10:], ipChecksum(ip))
	udp := f[34:42]
	binary.BigEndian.PutUint16(udp[0:], srcPort)
	binary.BigEndian.PutUint16(udp[2:], DstPort)
	binary.BigEndian.PutUint16(udp[4:], uint16(pktSize-34))
	return f
}

func ipChecksum(h []byte) uint16 {
	var s uint32
	for i := 0; i+1 < len(h); i += 2 {
		s += uint32(binary.BigEndian.Uint16(h[i:]))
	}
	for s>>16 != 0 {
		s = s&0xffff + s>>16
	}
	return ^uint16(s)
}

// goPinned runs f on a new OS thread that joins namespace ns and is pinned
// to cpu (lockAndPin); the thread is discarded afterwards. The channel gets
// the pinning's error or f's.
func goPinned(ns netns.NsHandle, cpu int, f func() error) <-chan error {
	errc := make(chan error, 1)
	go func() {
		if err := lockAndPin(ns, cpu); err != nil {
			errc <- err
			return
		}
		errc <- f()
	}()
	return errc
}

// lockAndPin locks the goroutine to its OS thread, joins ns (if >= 0) and
// pins the thread to cpu. The thread must never be unlocked afterwards.
func lockAndPin(ns netns.NsHandle, cpu int) error {
	runtime.LockOSThread()
	if ns >= 0 {
		if err := netns.Set(ns); err != nil {
			return fmt.Errorf("validate: setns: %w", err)
		}
	}
	if cpu >= 0 {
		var set unix.CPUSet
		set.Set(cpu)
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return fmt.Errorf("validate: pin to CPU %d: %w", cpu, err)
		}
	}
	return nil
}

// pacer bounds a loop by count, deadline and context, and limits its rate.
type pacer struct {
	ctx      context.Context
	start    time.Time
	deadline time.Time
	count    uint64
	rate     float64
	sent     *atomic.Uint64
	n        uint64
}

// next returns how many packets may be sent now (0 = stop).
func (p *pacer) next(max uint64) uint64 {
	if p.ctx.Err() != nil {
		return 0
	}
	now := time.Now()
	if !now.Before(p.deadline) {
		return 0
	}
	if p.count > 0 {
		if p.n >= p.count {
			return 0
		}
		max = min(max, p.count-p.n)
	}
	if p.rate > 0 {
		due := p.start.Add(time.Duration(float64(p.n) / p.rate * 1e9))
		if d := due.Sub(now); d > 0 {
			time.Sleep(min(d, p.deadline.Sub(now)))
			if !time.Now().Before(p.deadline) || p.ctx.Err() != nil {
				return 0
			}
		}
	}
	return max
}

func (p *pacer) done(n uint64) {
	p.n += n
	p.sent.Add(n)
}

// RunGenerator sends traffic from the harness's sender namespace until
// Count packets are sent, Duration passes or ctx ends, whichever first. The
// number of packets handed to the kernel is added to sent as it goes.
func RunGenerator(ctx context.Context, h *Harness, o GenOptions, sent *atomic.Uint64) error {
	if err := o.check(); err != nil {
		return err
	}
	if h.External {
		return usageErr("no generator on --iface: traffic comes from outside")
	}
	var prog *ebpf.Program
	var it *ebpf.Map
	if o.Kind == GenLive {
		var err error
		prog, it, err = LoadGenerator(GenSpec{Ifindex: h.SndIfindex, Flows: o.Flows, BasePort: BasePort})
		if err != nil {
			return err
		}
		defer prog.Close()
		if it != nil {
			defer it.Close()
		}
	}
	return <-goPinned(h.sndNs, o.CPU, func() error {
		now := time.Now()
		p := &pacer{ctx: ctx, start: now, deadline: now.Add(o.Duration), count: o.Count, rate: o.Rate, sent: sent}
		switch o.Kind {
		case GenLive:
			return genLive(p, prog, h.SndIfindex, o)
		case GenAFPacket:
			return genAFPacket(p, h.SndIfindex, o)
		default: // GenUDP: check admits only the three kinds
			return genUDP(p, o)
		}
	})
}

// xdpMD is struct xdp_md, the BPF_PROG_RUN context of an XDP program.
type xdpMD struct {
	Data           uint32
	DataEnd        uint32
	DataMeta       uint32
	IngressIfindex uint32
	RxQueueIndex   uint32
	EgressIfindex  uint32
}

// liveChunk is the first call's repeat count of the live generator.
var liveChunk = 1 << 18

func genLive(p *pacer, prog *ebpf.Program, ifindex int, o GenOptions) error {
	// A signal interrupts BPF_PROG_RUN with EINTR and cilium/ebpf reruns the
	// whole batch, so more frames would leave than counted. Block signals on
	// this (discarded) thread; the process still gets them on others.
	var all unix.Sigset_t
	for i := range all.Val {
		all.Val[i] = ^uint64(0)
	}
	unix.PthreadSigmask(unix.SIG_BLOCK, &all, nil)
	frame := BuildFrame(o.PktSize, BasePort)
	// Every BPF_PROG_RUN call sets up and tears down a page_pool, which
	// costs about 25 ms here, so calls must be long: aim at about 250 ms of
	// traffic per call (the time bound is kept to that granularity).
	chunk := uint64(liveChunk)
	if o.Rate > 0 {
		chunk = max(burst, uint64(o.Rate/20))
	}
	for {
		n := p.next(chunk)
		if n == 0 {
			return nil
		}
		t0 := time.Now()
		_, err := prog.Run(&ebpf.RunOptions{
			Data:      frame,
			Repeat:    uint32(n),
			BatchSize: burst,
			Flags:     unix.BPF_F_TEST_XDP_LIVE_FRAMES,
			Context:   xdpMD{DataEnd: uint32(len(frame)), IngressIfindex: uint32(ifindex)},
		})
		if err != nil {
			if errors.Is(err, unix.EINVAL) || errors.Is(err, ebpf.ErrNotSupported) {
				return fmt.Errorf("validate: live frames (BPF_F_TEST_XDP_LIVE_FRAMES): %w: %w", ErrNotSupported, err)
			}
			return fmt.Errorf("validate: live frames: %w", err)
		}
		p.done(n)
		if o.Rate == 0 {
			if d := time.Since(t0).Seconds(); d > 0 {
				chunk = uint64(min(max(float64(n)/d*0.25, 1<<16), 1<<24))
			}
		}
	}
}

type mmsghdr struct {
	hdr unix.Msghdr
	len uint32
	_   [4]byte
}

// sendmmsg sends msgs[:n]; it returns the number sent.
func sendmmsg(fd int, msgs []mmsghdr) (int, error) {
	r, _, errno := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(fd), uintptr(unsafe.Pointer(&msgs[0])), uintptr(len(msgs)), 0, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(r), nil
}

// sendLoop sends batches of up to 64 frames from frames (cycled) on fd,
// with name/namelen per message (or none).
func sendLoop(p *pacer, fd int, frames [][]byte, name unsafe.Pointer, namelen uint32) error {
	iovs := make([]unix.Iovec, burst)
	msgs := make([]mmsghdr, burst)
	next := 0
	for {
		n := int(p.next(burst))
		if n == 0 {
			return nil
		}
		for i := 0; i < n; i++ {
			f := frames[next]
			next = (next + 1) % len(frames)
			iovs[i].Base = &f[0]
			iovs[i].SetLen(len(f))
			msgs[i].hdr = unix.Msghdr{Iov: &iovs[i], Iovlen: 1}
			if name != nil {
				msgs[i].hdr.Name = (*byte)(name)
				msgs[i].hdr.Namelen = namelen
			}
		}
		sentN, err := sendmmsg(fd, msgs[:n])
		runtime.KeepAlive(frames)
		if err != nil {
			if errors.Is(err, unix.ENOBUFS) || errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.ECONNREFUSED) {
				continue // ring full / ICMP unreachable: keep going
			}
			return fmt.Errorf("validate: sendmmsg: %w", err)
		}
		p.done(uint64(sentN))
	}
}

func genAFPacket(p *pacer, ifindex int, o GenOptions) error {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0) // protocol 0: send only
	if err != nil {
		return fmt.Errorf("validate: AF_PACKET socket: %w", err)
	}
	defer unix.Close(fd)
	if err := unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_QDISC_BYPASS, 1); err != nil {
		return fmt.Errorf("validate: PACKET_QDISC_BYPASS: %w", err)
	}
	frames := make([][]byte, o.Flows)
	for i := range frames {
		frames[i] = BuildFrame(o.PktSize, uint16(BasePort+i))
	}
	sll := &unix.RawSockaddrLinklayer{Family: unix.AF_PACKET, Protocol: htons(0x0800), Ifindex: int32(ifindex), Halen: 6}
	copy(sll.Addr[:], ReceiverMAC)
	err = sendLoop(p, fd, frames, unsafe.Pointer(sll), uint32(unsafe.Sizeof(*sll)))
	runtime.KeepAlive(sll)
	return err
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func genUDP(p *pacer, o GenOptions) error {
	fds := make([]int, o.Flows)
	for i := range fds {
		fds[i] = -1
	}
	defer func() {
		for _, fd := range fds {
			if fd >= 0 {
				unix.Close(fd)
			}
		}
	}()
	for i := range fds {
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("validate: UDP socket: %w", err)
		}
		fds[i] = fd
		src := &unix.SockaddrInet4{Port: BasePort + i}
		copy(src.Addr[:], SenderIP)
		if err := unix.Bind(fd, src); err != nil {
			return fmt.Errorf("validate: bind UDP %d: %w", BasePort+i, err)
		}
		dst := &unix.SockaddrInet4{Port: DstPort}
		copy(dst.Addr[:], ReceiverIP)
		if err := unix.Connect(fd, dst); err != nil {
			return fmt.Errorf("validate: connect UDP: %w", err)
		}
	}
	payload := [][]byte{make([]byte, o.PktSize-42)}
	if o.Flows == 1 {
		return sendLoop(p, fds[0], payload, nil, 0)
	}
	// Rotate sockets per batch of 64.
	for i := 0; ; i = (i + 1) % len(fds) {
		sub := *p
		sub.count = p.n + burst
		if p.count > 0 {
			sub.count = min(sub.count, p.count)
		}
		before := p.n
		if err := sendLoop(&sub, fds[i], payload, nil, 0); err != nil {
			return err
		}
		p.n = sub.n
		if p.n == before {
			return nil
		}
	}
}

// Listener reads the receiver's UDP port with a blocking recvfrom on one
// CPU, as an application would.
type Listener struct {
	Read atomic.Uint64
	fd   int
	stop atomic.Bool
	done chan struct{}
}

// StartListener binds ReceiverIP:DstPort in the receiving namespace and
// starts reading on a thread pinned to cpu; busyUS > 0 sets SO_BUSY_POLL
// on the socket.
func StartListener(h *Harness, cpu, busyUS int) (*Listener, error) {
	l := &Listener{done: make(chan struct{}), fd: -1}
	open := openUDP
	if busyUS > 0 {
		open = func() (int, error) {
			return openBound(unix.SOCK_DGRAM, DstPort, nil, func(fd int) error {
				if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_BUSY_POLL, busyUS); err != nil {
					return fmt.Errorf("validate: setsockopt SO_BUSY_POLL %d: %w", busyUS, err)
				}
				return nil
			})
		}
	}
	fd, err := startPinned(h.rcvNs, cpu, l.done, open, func(fd int) {
		buf := make([]byte, 2048)
		for !l.stop.Load() {
			if n, err := unix.Read(fd, buf); err == nil && n >= 0 {
				l.Read.Add(1)
			}
		}
	})
	l.fd = fd
	if err != nil {
		return nil, err
	}
	return l, nil
}

// openUDP returns a UDP socket bound to ReceiverIP:DstPort whose reads
// time out every 100 ms.
func openUDP() (int, error) { return openBound(unix.SOCK_DGRAM, DstPort, nil, nil) }

// startPinned runs open and then serve(fd) on a thread locked in ns and
// pinned to cpu, closing fd and then done when serve returns. It returns
// open's result once open has returned (done is closed on failure too).
func startPinned(ns netns.NsHandle, cpu int, done chan struct{}, open func() (int, error), serve func(fd int)) (int, error) {
	type opened struct {
		fd  int
		err error
	}
	ready := make(chan opened, 1)
	go func() {
		defer close(done)
		if err := lockAndPin(ns, cpu); err != nil {
			ready <- opened{-1, err}
			return
		}
		fd, err := open()
		ready <- opened{fd, err}
		if err != nil {
			return
		}
		defer unix.Close(fd)
		serve(fd)
	}()
	o := <-ready
	if o.err != nil {
		<-done
	}
	return o.fd, o.err
}

// Stop ends the listener (within its 100 ms receive timeout).
func (l *Listener) Stop() {
	if l == nil {
		return
	}
	l.stop.Store(true)
	<-l.done
}
