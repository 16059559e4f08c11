package validate

import (
	"fmt"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// TCPPort is the port of the TCP sink in the receiving namespace (the
// discard port, as the UDP traffic).
const TCPPort = 9

// tcpWriteSize is the sender's write size: netperf TCP_STREAM's default
// send size on Linux (the socket buffer's 16 KiB) times 4, 64 KiB.
const tcpWriteSize = 64 << 10

// tcpReadSize is the sink's read size: netperf's default receive size
// (128 KiB, the 131072 of the netperf-style report).
const tcpReadSize = 128 << 10

// TCPSink is a netserver-like TCP reader in the receiving namespace: it
// accepts connections on ReceiverIP:TCPPort and reads each with one
// thread pinned to a CPU, counting bytes and read calls.
type TCPSink struct {
	Bytes atomic.Uint64 // payload bytes read
	Reads atomic.Uint64 // read(2) calls that returned data
	lfd   int
	cfd   atomic.Int32 // the connection being drained (-1: none)
	stop  atomic.Bool
	done  chan struct{}
}

// TCPRcvState is the receiving socket's receive-buffer autotuning state:
// sk_rcvbuf (SO_RCVBUF) and TCP_INFO's tcpi_rcv_rtt (the receiver's RTT
// estimate, rcv_rtt_est, in us) and tcpi_rcv_space (rcvq_space.space: the
// bytes copied per estimated RTT that tcp_rcv_space_adjust sized it from).
type TCPRcvState struct {
	Rcvbuf   int    `json:"rcvbuf"`
	RcvRTTus uint32 `json:"rcv_rtt_us"`
	RcvSpace uint32 `json:"rcv_space"`
}

// RcvState reads the autotuning state of the connection being drained;
// ok is false when there is none.
func (s *TCPSink) RcvState() (st TCPRcvState, ok bool) {
	fd := int(s.cfd.Load())
	if fd < 0 {
		return st, false
	}
	info, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
	if err != nil {
		return st, false
	}
	rb, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF)
	if err != nil {
		return st, false
	}
	return TCPRcvState{Rcvbuf: rb, RcvRTTus: info.Rcv_rtt, RcvSpace: info.Rcv_space}, true
}

// StartTCPSink listens on ReceiverIP:TCPPort in the receiving namespace and
// reads the first connection on a thread pinned to cpu.
func StartTCPSink(h *Harness, cpu int) (*TCPSink, error) {
	s := &TCPSink{done: make(chan struct{}), lfd: -1}
	s.cfd.Store(-1)
	fd, err := startPinned(h.rcvNs, cpu, s.done, listenTCP, s.serve)
	s.lfd = fd
	if err != nil {
		return nil, err
	}
	return s, nil
}

// listenTCP returns a listening socket on ReceiverIP:TCPPort whose accept
// and reads time out every 100 ms, so that Stop is seen.
func listenTCP() (int, error) {
	return openBound(unix.SOCK_STREAM, TCPPort,
		func(fd int) error { return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEADDR, 1) },
		func(fd int) error { return unix.Listen(fd, 4) })
}

// openBound returns a socket of type typ bound to ReceiverIP:port, with
// pre run before the bind and post after it (either may be nil), and a
// 100 ms receive timeout. The socket is closed on any error.
func openBound(typ, port int, pre, post func(fd int) error) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, typ|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	sa := &unix.SockaddrInet4{Port: port}
	copy(sa.Addr[:], ReceiverIP)
	steps := []func(int) error{pre, func(fd int) error {
		if err := unix.Bind(fd, sa); err != nil {
			return fmt.Errorf("validate: bind %v:%d: %w", ReceiverIP, port, err)
		}
		return nil
	}, post, setTimeout}
	for _, f := range steps {
		if f == nil {
			continue
		}
		if err := f(fd); err != nil {
			unix.Close(fd)
			return -1, err
		}
	}
	return fd, nil
}

func setTimeout(fd int) error {
	tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
	return unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
}

// serve accepts and drains connections until Stop.
func (s *TCPSink) serve(lfd int) {
	buf := make([]byte, tcpReadSize)
	for !s.stop.Load() {
		cfd, _, err := unix.Accept4(lfd, unix.SOCK_CLOEXEC)
		if err != nil {
			continue // timeout: check stop
		}
		if setTimeout(cfd) == nil {
			s.cfd.Store(int32(cfd))
			s.drain(cfd, buf)
			s.cfd.Store(-1)
		}
		unix.Close(cfd)
	}
}

// drain reads cfd until EOF, an error or Stop.
func (s *TCPSink) drain(cfd int, buf []byte) {
	for !s.stop.Load() {
		n, err := unix.Read(cfd, buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil || n == 0:
			return
		}
		s.Bytes.Add(uint64(n))
		s.Reads.Add(1)
	}
}

// Stop ends the sink (within its 100 ms timeouts).
func (s *TCPSink) Stop() {
	if s == nil {
		return
	}
	s.stop.Store(true)
	<-s.done
}

// genTCP is a netperf TCP_STREAM sender: one connection to the sink,
// writing tcpWriteSize blocks until the pacer stops. sent counts bytes.
func genTCP(p *pacer) error {
	fd, err := dialReceiver(TCPPort)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
	if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &tv); err != nil {
		return err
	}
	buf := make([]byte, tcpWriteSize)
	for {
		if p.next(1) == 0 {
			return nil
		}
		n, err := unix.Write(fd, buf)
		switch {
		case err == unix.EAGAIN || err == unix.EINTR:
			continue
		case err != nil:
			return fmt.Errorf("validate: TCP write: %w", err)
		}
		p.done(uint64(n))
	}
}

// dialReceiver connects a TCP socket to ReceiverIP:port (the calling thread
// is in the sender namespace); the socket is closed on error.
func dialReceiver(port int) (int, error) {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	sa := &unix.SockaddrInet4{Port: port}
	copy(sa.Addr[:], ReceiverIP)
	if err := unix.Connect(fd, sa); err != nil {
		unix.Close(fd)
		return -1, fmt.Errorf("validate: TCP connect to %v:%d: %w", ReceiverIP, port, err)
	}
	return fd, nil
}
