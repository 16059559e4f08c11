package validate

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"github.com/cilium/ebpf"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Linux capability numbers (include/uapi/linux/capability.h).
const (
	capNetAdmin = 12
	capSysAdmin = 21
	capBPF      = 39
)

func hasCap(c uint) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	return data[c/32].Effective&(1<<(c%32)) != 0
}

// checkPrivileges names the missing capabilities, if any.
func checkPrivileges() error {
	var missing []string
	if !hasCap(capNetAdmin) {
		missing = append(missing, "CAP_NET_ADMIN")
	}
	if !hasCap(capBPF) && !hasCap(capSysAdmin) {
		missing = append(missing, "CAP_BPF (or CAP_SYS_ADMIN)")
	}
	if !hasCap(capSysAdmin) {
		missing = append(missing, "CAP_SYS_ADMIN (network namespaces and sysfs)")
	}
	if len(missing) > 0 {
		return &Error{Kind: ErrPrivilege, Msg: "validate: missing " + strings.Join(missing, ", ") + "; run as root",
			Err: ErrNotSupported}
	}
	return nil
}

var (
	netnsRe = regexp.MustCompile(`^` + Prefix + `-(\d+)-[a-z]+$`)
	linkRe  = regexp.MustCompile(`^` + Prefix + `(\d+)[a-z]$`)
)

func pidAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// Leftover is something a dead rxsim left behind.
type Leftover struct {
	Kind string // "netns", "link" or "prog"
	Name string
	PID  int
}

// FindLeftovers lists rxsim namespaces and links (in the current namespace)
// whose owning PID is no longer alive; with all, also those of live PIDs
// other than this process.
func FindLeftovers(all bool) []Leftover {
	var out []Leftover
	self := os.Getpid()
	dead := func(pid int) bool {
		if pid == self {
			return false
		}
		return all || !pidAlive(pid)
	}
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if m := netnsRe.FindStringSubmatch(e.Name()); m != nil {
			pid, _ := strconv.Atoi(m[1])
			if dead(pid) {
				out = append(out, Leftover{"netns", e.Name(), pid})
			}
		}
	}
	links, _ := netlink.LinkList()
	for _, l := range links {
		if m := linkRe.FindStringSubmatch(l.Attrs().Name); m != nil {
			pid, _ := strconv.Atoi(m[1])
			if dead(pid) {
				out = append(out, Leftover{"link", l.Attrs().Name, pid})
			}
		}
	}
	return out
}

// Cleanup removes what dead rxsim processes left: namespaces named
// rxsim-<pid>-* (deleting one destroys its veth end and detaches its XDP
// program) and links named rxsim<pid>? in the current namespace. It returns
// what it removed.
func Cleanup() ([]Leftover, error) {
	left := FindLeftovers(false)
	var errs []error
	for _, l := range left {
		switch l.Kind {
		case "netns":
			// Delete the links inside first so the veth goes now, not when
			// the namespace is finally freed.
			if ns, err := netns.GetFromName(l.Name); err == nil {
				if hd, err := netlink.NewHandleAt(ns); err == nil {
					if ls, err := hd.LinkList(); err == nil {
						for _, x := range ls {
							if linkRe.MatchString(x.Attrs().Name) {
								hd.LinkDel(x)
							}
						}
					}
					hd.Close()
				}
				ns.Close()
			}
			if err := netns.DeleteNamed(l.Name); err != nil {
				errs = append(errs, fmt.Errorf("validate: delete netns %s: %w", l.Name, err))
			}
		case "link":
			if x, err := netlink.LinkByName(l.Name); err == nil {
				if err := netlink.LinkDel(x); err != nil {
					errs = append(errs, fmt.Errorf("validate: delete link %s: %w", l.Name, err))
				}
			}
		}
	}
	return left, errors.Join(errs...)
}

// LoadedPrograms lists the IDs and names of loaded BPF programs whose name
// starts with "rxsim".
func LoadedPrograms() (map[ebpf.ProgramID]string, error) {
	out := map[ebpf.ProgramID]string{}
	var id ebpf.ProgramID
	for {
		next, err := ebpf.ProgramGetNextID(id)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return out, nil
			}
			return out, err
		}
		id = next
		p, err := ebpf.NewProgramFromID(id)
		if err != nil {
			continue
		}
		if info, err := p.Info(); err == nil && strings.HasPrefix(info.Name, Prefix) {
			out[id] = info.Name
		}
		p.Close()
	}
}
