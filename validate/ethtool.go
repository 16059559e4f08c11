package validate

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"runtime"
	"unsafe"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ethtool ioctl commands (include/uapi/linux/ethtool.h).
const (
	ethtoolGDrvInfo = 0x00000003
	ethtoolGTxCsum  = 0x00000016
	ethtoolSTxCsum  = 0x00000017
	ethtoolGStrings = 0x0000001b
	ethtoolGStats   = 0x0000001d
	ethtoolGGRO     = 0x0000002b
	ethtoolSGRO     = 0x0000002c
	ethSSStats      = 1
	ethGStringLen   = 32
)

// ethtoolSock issues SIOCETHTOOL ioctls on an AF_INET socket created in a
// network namespace (a socket stays bound to the namespace it was created
// in, so it can be used from any thread).
type ethtoolSock struct{ fd int }

func newEthtoolSock(ns netns.NsHandle) (*ethtoolSock, error) {
	var fd int
	err := inNetns(ns, func() error {
		var err error
		fd, err = unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("validate: ethtool socket: %w", err)
	}
	return &ethtoolSock{fd: fd}, nil
}

func (s *ethtoolSock) close() {
	if s != nil && s.fd > 0 {
		unix.Close(s.fd)
		s.fd = -1
	}
}

type ifreqData struct {
	name [unix.IFNAMSIZ]byte
	data unsafe.Pointer
	_    [16]byte
}

func (s *ethtoolSock) ioctl(dev string, buf []byte) error {
	var ifr ifreqData
	copy(ifr.name[:], dev)
	ifr.data = unsafe.Pointer(&buf[0])
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(s.fd), unix.SIOCETHTOOL, uintptr(unsafe.Pointer(&ifr)))
	runtime.KeepAlive(buf)
	if errno != 0 {
		return errno
	}
	return nil
}

func (s *ethtoolSock) getValue(dev string, cmd uint32) (uint32, error) {
	buf := make([]byte, 8)
	binary.NativeEndian.PutUint32(buf, cmd)
	if err := s.ioctl(dev, buf); err != nil {
		return 0, fmt.Errorf("validate: ethtool 0x%x on %s: %w", cmd, dev, err)
	}
	return binary.NativeEndian.Uint32(buf[4:]), nil
}

func (s *ethtoolSock) setValue(dev string, cmd, v uint32) error {
	buf := make([]byte, 8)
	binary.NativeEndian.PutUint32(buf, cmd)
	binary.NativeEndian.PutUint32(buf[4:], v)
	if err := s.ioctl(dev, buf); err != nil {
		return fmt.Errorf("validate: ethtool 0x%x on %s: %w", cmd, dev, err)
	}
	return nil
}

func b2u(b bool) uint32 {
	if b {
		return 1
	}
	return 0
}

// SetGRO switches GRO (ethtool -K dev gro on|off).
func (s *ethtoolSock) SetGRO(dev string, on bool) error { return s.setValue(dev, ethtoolSGRO, b2u(on)) }

// SetTxCsum switches tx checksum offload (ethtool -K dev tx on|off).
func (s *ethtoolSock) SetTxCsum(dev string, on bool) error {
	return s.setValue(dev, ethtoolSTxCsum, b2u(on))
}

// GRO reports whether GRO is on.
func (s *ethtoolSock) GRO(dev string) (bool, error) {
	v, err := s.getValue(dev, ethtoolGGRO)
	return v != 0, err
}

// TxCsum reports whether tx checksum offload is on.
func (s *ethtoolSock) TxCsum(dev string) (bool, error) {
	v, err := s.getValue(dev, ethtoolGTxCsum)
	return v != 0, err
}

// drvInfo returns the driver name and the number of statistics.
func (s *ethtoolSock) drvInfo(dev string) (string, int, error) {
	// struct ethtool_drvinfo: cmd, driver[32], version[32], fw_version[32],
	// bus_info[32], erom_version[32], reserved2[12], n_priv_flags, n_stats, ...
	buf := make([]byte, 196)
	binary.NativeEndian.PutUint32(buf, ethtoolGDrvInfo)
	if err := s.ioctl(dev, buf); err != nil {
		return "", 0, fmt.Errorf("validate: ethtool drvinfo %s: %w", dev, err)
	}
	drv := string(bytes.TrimRight(buf[4:36], "\x00"))
	return drv, int(binary.NativeEndian.Uint32(buf[180:])), nil
}

// Stats returns the device's ethtool statistics (`ethtool -S dev`) by name.
func (s *ethtoolSock) Stats(dev string) (map[string]uint64, error) {
	_, n, err := s.drvInfo(dev)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return map[string]uint64{}, nil
	}
	sbuf := make([]byte, 12+n*ethGStringLen)
	binary.NativeEndian.PutUint32(sbuf, ethtoolGStrings)
	binary.NativeEndian.PutUint32(sbuf[4:], ethSSStats)
	binary.NativeEndian.PutUint32(sbuf[8:], uint32(n))
	if err := s.ioctl(dev, sbuf); err != nil {
		return nil, fmt.Errorf("validate: ethtool strings %s: %w", dev, err)
	}
	vbuf := make([]byte, 8+n*8)
	binary.NativeEndian.PutUint32(vbuf, ethtoolGStats)
	binary.NativeEndian.PutUint32(vbuf[4:], uint32(n))
	if err := s.ioctl(dev, vbuf); err != nil {
		return nil, fmt.Errorf("validate: ethtool stats %s: %w", dev, err)
	}
	m := make(map[string]uint64, n)
	for i := 0; i < n; i++ {
		name := string(bytes.TrimRight(sbuf[12+i*ethGStringLen:12+(i+1)*ethGStringLen], "\x00"))
		m[name] = binary.NativeEndian.Uint64(vbuf[8+i*8:])
	}
	return m, nil
}

// inNetns runs fn on a fresh OS thread that has joined ns. The thread is
// never returned to the Go scheduler: it exits with the goroutine.
func inNetns(ns netns.NsHandle, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // not unlocked on purpose: the tainted thread exits
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("validate: setns: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}

// inNetnsSysfs is inNetns with a private mount namespace in which sysfs is
// mounted afresh on /sys, so /sys/class/net shows the devices of ns.
func inNetnsSysfs(ns netns.NsHandle, fn func() error) error {
	return inNetns(ns, func() error {
		if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
			return fmt.Errorf("validate: unshare mount namespace: %w", err)
		}
		if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
			return fmt.Errorf("validate: make / rslave: %w", err)
		}
		if err := unix.Mount("sysfs", "/sys", "sysfs", 0, ""); err != nil {
			return fmt.Errorf("validate: mount sysfs in netns: %w", err)
		}
		return fn()
	})
}
