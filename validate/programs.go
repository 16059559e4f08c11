package validate

import (
	"fmt"
	"runtime"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
)

// Program names the XDP program attached to the receiving interface, as
// xdp-bench names its commands.
type Program string

// The XDP programs validate can attach.
const (
	ProgDrop        Program = "drop"         // XDP_DROP every packet
	ProgPass        Program = "pass"         // XDP_PASS every packet
	ProgTx          Program = "tx"           // XDP_TX with the MAC addresses swapped (xdp-bench swap-macs)
	ProgRedirectCPU Program = "redirect-cpu" // XDP_REDIRECT into a BPF_MAP_TYPE_CPUMAP
)

// ProgramMode is the CPU selection of the redirect-cpu program, named as in
// xdp-bench's --program-mode.
type ProgramMode string

// The redirect-cpu program modes.
const (
	ModeNoTouch    ProgramMode = "no-touch"    // always the first CPU of the list
	ModeRoundRobin ProgramMode = "round-robin" // per-CPU iterator over the CPU list
	ModeL4Hash     ProgramMode = "l4-hash"     // hash of IPv4 saddr, daddr and L4 ports
)

// RemoteAction is the program run on the cpumap entry (on the remote CPU),
// named as in xdp-bench's --remote-action.
type RemoteAction string

// The remote actions.
const (
	RemoteDisabled RemoteAction = "disabled"
	RemoteDrop     RemoteAction = "drop"
	RemotePass     RemoteAction = "pass"
)

// Counter slots in the per-CPU "rxsim_cnt" array. Each slot holds a
// Counter (packets, bytes) per CPU.
const (
	SlotRx       = 0 // every packet the XDP program on the receiving interface saw
	SlotRemote   = 1 // packets the cpumap entry program saw (remote CPU)
	SlotSink     = 2 // packets returned to the sender by XDP_TX (counted on the sender)
	SlotRedirErr = 3 // bpf_redirect_map returned something other than XDP_REDIRECT
	nSlots       = 4
)

// XDP action codes (include/uapi/linux/bpf.h enum xdp_action).
const (
	xdpAborted  = 0
	xdpDrop     = 1
	xdpPass     = 2
	xdpTx       = 3
	xdpRedirect = 4
)

// Counter is one slot of the per-CPU counter array, as the BPF program
// writes it.
type Counter struct {
	Packets uint64
	Bytes   uint64
}

// progBuilder appends instructions and puts pending labels on the next
// instruction.
type progBuilder struct {
	insns   asm.Instructions
	pending string
}

func (b *progBuilder) add(ins ...asm.Instruction) {
	for _, in := range ins {
		if b.pending != "" {
			in = in.WithSymbol(b.pending)
			b.pending = ""
		}
		b.insns = append(b.insns, in)
	}
}

func (b *progBuilder) label(name string) {
	if b.pending != "" {
		b.add(asm.Mov.Imm(asm.R9, 0)) // no-op carrying the earlier label
	}
	b.pending = name
}

func (b *progBuilder) done() asm.Instructions {
	if b.pending != "" {
		b.add(asm.Mov.Imm(asm.R9, 0))
	}
	return b.insns
}

// lookup emits: R0 = bpf_map_lookup_elem(m, &key) with the u32 key at
// fp-4, jumping to miss when there is no element. It clobbers R0-R5.
func (b *progBuilder) lookup(m *ebpf.Map, key int32, miss string) {
	b.add(
		asm.StoreImm(asm.R10, -4, int64(key), asm.Word),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, miss),
	)
}

// iterate emits, after a lookup that found the per-CPU iterator at R0:
// R8 = the iterator, the iterator incremented, R8 %= n.
func (b *progBuilder) iterate(n int32) {
	b.add(
		asm.LoadMem(asm.R8, asm.R0, 0, asm.DWord),
		asm.Mov.Reg(asm.R1, asm.R8),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.Mod.Imm(asm.R8, n),
	)
}

// count emits: counters[slot] += {1, R7}. It clobbers R0-R5. R6 must not be
// touched by the caller between here and use (it is preserved).
func (b *progBuilder) count(counters *ebpf.Map, slot int32, label string) {
	b.lookup(counters, slot, label)
	b.add(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Add.Imm(asm.R1, 1),
		asm.StoreMem(asm.R0, 0, asm.R1, asm.DWord),
		asm.LoadMem(asm.R1, asm.R0, 8, asm.DWord),
		asm.Add.Reg(asm.R1, asm.R7),
		asm.StoreMem(asm.R0, 8, asm.R1, asm.DWord),
	)
	b.label(label)
}

// dropEvery emits: return XDP_DROP when this CPU's SlotRx packet count
// (just incremented by count) is a multiple of n; otherwise fall through.
func (b *progBuilder) dropEvery(counters *ebpf.Map, n uint32) {
	b.lookup(counters, SlotRx, "keep")
	b.add(
		asm.LoadMem(asm.R1, asm.R0, 0, asm.DWord),
		asm.Mod.Imm(asm.R1, int32(n)),
		asm.JNE.Imm(asm.R1, 0, "keep"),
		asm.Mov.Imm(asm.R0, xdpDrop),
		asm.Return(),
	)
	b.label("keep")
}

// prologue: R6 = ctx, R7 = bpf_xdp_get_buff_len(ctx).
func (b *progBuilder) prologue() {
	b.add(
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.FnXdpGetBuffLen.Call(),
		asm.Mov.Reg(asm.R7, asm.R0),
	)
}

// XDPSpec describes the XDP program to build: a pure blueprint.
type XDPSpec struct {
	Program      Program
	Mode         ProgramMode  // redirect-cpu only
	CPUs         []int        // redirect-cpu targets
	Qsize        int          // cpumap ptr_ring size
	RemoteAction RemoteAction // cpumap entry program
	// DropEvery, for the pass program, drops every DropEvery-th packet of
	// each CPU instead of passing it (0 or 1: none), to make a TCP
	// receiver recover from losses.
	DropEvery uint32
}

// XDPObjects are the loaded kernel objects of an XDPSpec.
type XDPObjects struct {
	Counters *ebpf.Map     // per-CPU array of Counter, nSlots entries
	CPUMap   *ebpf.Map     // redirect-cpu only
	RR       *ebpf.Map     // round-robin iterator
	Prog     *ebpf.Program // the program for the receiving interface
	Remote   *ebpf.Program // cpumap entry program, if any
	Sink     *ebpf.Program // counts XDP_TX'd packets on the sender (tx only)
}

// Close releases every object.
func (o *XDPObjects) Close() {
	for _, p := range []*ebpf.Program{o.Prog, o.Remote, o.Sink} {
		if p != nil {
			p.Close()
		}
	}
	for _, m := range []*ebpf.Map{o.Counters, o.CPUMap, o.RR} {
		if m != nil {
			m.Close()
		}
	}
}

// possibleCPUs returns the number of possible CPUs (per-CPU map width).
func possibleCPUs() int {
	n, err := ebpf.PossibleCPU()
	if err != nil || n <= 0 {
		return runtime.NumCPU()
	}
	return n
}

func newCounters() (*ebpf.Map, error) {
	return ebpf.NewMap(&ebpf.MapSpec{
		Name:       "rxsim_cnt",
		Type:       ebpf.PerCPUArray,
		KeySize:    4,
		ValueSize:  16,
		MaxEntries: nSlots,
	})
}

// LoadXDP loads the maps and programs of spec. Errors wrap ErrBPFLoad.
func LoadXDP(spec XDPSpec) (*XDPObjects, error) {
	o := &XDPObjects{}
	ok := false
	defer func() {
		if !ok {
			o.Close()
		}
	}()
	var err error
	if o.Counters, err = newCounters(); err != nil {
		return nil, bpfLoadErr("counter map", err)
	}
	b := &progBuilder{}
	b.prologue()
	b.count(o.Counters, SlotRx, "counted")
	name := "rxsim_" + string(spec.Program)
	switch spec.Program {
	case ProgDrop:
		b.add(asm.Mov.Imm(asm.R0, xdpDrop), asm.Return())
	case ProgPass:
		if spec.DropEvery > 1 {
			b.dropEvery(o.Counters, spec.DropEvery)
		}
		b.add(asm.Mov.Imm(asm.R0, xdpPass), asm.Return())
	case ProgTx:
		// swap-macs: three u16 swaps of bytes [0,6) and [6,12).
		b.add(
			asm.LoadMem(asm.R2, asm.R6, 0, asm.Word), // data
			asm.LoadMem(asm.R3, asm.R6, 4, asm.Word), // data_end
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, 12),
			asm.JGT.Reg(asm.R4, asm.R3, "tx"),
		)
		for i := int16(0); i < 6; i += 2 {
			b.add(
				asm.LoadMem(asm.R4, asm.R2, i, asm.Half),
				asm.LoadMem(asm.R5, asm.R2, i+6, asm.Half),
				asm.StoreMem(asm.R2, i, asm.R5, asm.Half),
				asm.StoreMem(asm.R2, i+6, asm.R4, asm.Half),
			)
		}
		b.label("tx")
		b.add(asm.Mov.Imm(asm.R0, xdpTx), asm.Return())
		name = "rxsim_tx"
	case ProgRedirectCPU:
		name = "rxsim_redir_cpu"
		if err := o.loadCPUMap(spec); err != nil {
			return nil, err
		}
		n := int32(len(spec.CPUs))
		// R8 = index into spec.CPUs.
		switch spec.Mode {
		case ModeNoTouch, "":
			b.add(asm.Mov.Imm(asm.R8, 0))
		case ModeRoundRobin:
			if o.RR, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rxsim_rr", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1}); err != nil {
				return nil, bpfLoadErr("round-robin map", err)
			}
			b.add(asm.Mov.Imm(asm.R8, 0))
			b.lookup(o.RR, 0, "pick")
			b.iterate(n)
			b.label("pick")
		case ModeL4Hash:
			b.add(
				asm.Mov.Imm(asm.R8, 0),
				asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
				asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
				asm.Mov.Reg(asm.R4, asm.R2),
				asm.Add.Imm(asm.R4, 38),
				asm.JGT.Reg(asm.R4, asm.R3, "pick"),
				asm.LoadMem(asm.R5, asm.R2, 12, asm.Half),
				asm.JNE.Imm(asm.R5, 0x0008, "pick"), // ETH_P_IP in network order
				asm.LoadMem(asm.R5, asm.R2, 26, asm.Word),
				asm.LoadMem(asm.R4, asm.R2, 30, asm.Word),
				asm.Xor.Reg32(asm.R5, asm.R4),
				asm.LoadMem(asm.R4, asm.R2, 34, asm.Word),
				asm.Xor.Reg32(asm.R5, asm.R4),
				asm.Mul.Imm32(asm.R5, -1640531535), // 0x9e3779b1, golden ratio
				asm.RSh.Imm32(asm.R5, 16),
				asm.Mod.Imm32(asm.R5, n),
				asm.Mov.Reg(asm.R8, asm.R5),
			)
			b.label("pick")
		default:
			return nil, usageErr("unknown --program-mode %q", spec.Mode)
		}
		// R2 = spec.CPUs[R8]
		b.add(asm.Mov.Imm(asm.R2, int32(spec.CPUs[0])))
		for i := 1; i < len(spec.CPUs); i++ {
			l := fmt.Sprintf("cpu%d", i)
			b.add(asm.JNE.Imm(asm.R8, int32(i), l), asm.Mov.Imm(asm.R2, int32(spec.CPUs[i])))
			b.label(l)
		}
		b.add(
			asm.LoadMapPtr(asm.R1, o.CPUMap.FD()),
			asm.Mov.Imm(asm.R3, 0),
			asm.FnRedirectMap.Call(),
			asm.JEq.Imm(asm.R0, xdpRedirect, "out"),
			asm.Mov.Reg(asm.R8, asm.R0),
		)
		b.count(o.Counters, SlotRedirErr, "cnt2")
		b.add(asm.Mov.Reg(asm.R0, asm.R8), asm.Return())
		b.label("out")
		b.add(asm.Return())
	default:
		return nil, usageErr("unknown --program %q", spec.Program)
	}
	o.Prog, err = ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         name,
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: b.done(),
	})
	if err != nil {
		return nil, bpfLoadErr(name, err)
	}
	if spec.Program == ProgTx {
		if o.Sink, err = countingProg("rxsim_sink", o.Counters, SlotSink, xdpDrop, ebpf.AttachNone); err != nil {
			return nil, err
		}
	}
	ok = true
	return o, nil
}

// countingProg builds an XDP program that counts into slot and returns
// action.
func countingProg(name string, counters *ebpf.Map, slot int32, action int32, at ebpf.AttachType) (*ebpf.Program, error) {
	b := &progBuilder{}
	b.prologue()
	b.count(counters, slot, "counted")
	b.add(asm.Mov.Imm(asm.R0, action), asm.Return())
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         name,
		Type:         ebpf.XDP,
		License:      "GPL",
		AttachType:   at,
		Instructions: b.done(),
	})
	if err != nil {
		return nil, bpfLoadErr(name, err)
	}
	return p, nil
}

// cpumapVal is struct bpf_cpumap_val.
type cpumapVal struct {
	Qsize  uint32
	ProgFD int32
}

func (o *XDPObjects) loadCPUMap(spec XDPSpec) error {
	var err error
	if len(spec.CPUs) == 0 {
		return usageErr("redirect-cpu needs at least one --cpu")
	}
	o.CPUMap, err = ebpf.NewMap(&ebpf.MapSpec{
		Name:       "rxsim_cpumap",
		Type:       ebpf.CPUMap,
		KeySize:    4,
		ValueSize:  8,
		MaxEntries: uint32(possibleCPUs()),
	})
	if err != nil {
		return bpfLoadErr("cpumap", err)
	}
	var fd int32
	switch spec.RemoteAction {
	case RemoteDisabled, "":
	case RemoteDrop, RemotePass:
		act := int32(xdpDrop)
		if spec.RemoteAction == RemotePass {
			act = xdpPass
		}
		if o.Remote, err = countingProg("rxsim_remote", o.Counters, SlotRemote, act, ebpf.AttachXDPCPUMap); err != nil {
			return err
		}
		fd = int32(o.Remote.FD())
	default:
		return usageErr("unknown --remote-action %q", spec.RemoteAction)
	}
	for _, c := range spec.CPUs {
		if err := o.CPUMap.Put(uint32(c), cpumapVal{Qsize: uint32(spec.Qsize), ProgFD: fd}); err != nil {
			return bpfLoadErr(fmt.Sprintf("cpumap entry for CPU %d (qsize %d)", c, spec.Qsize), err)
		}
	}
	return nil
}

// ReadCounter sums slot over all CPUs and returns the total and the per-CPU
// values.
func ReadCounter(m *ebpf.Map, slot uint32) (Counter, []Counter, error) {
	var per []Counter
	if err := m.Lookup(slot, &per); err != nil {
		return Counter{}, nil, fmt.Errorf("validate: read counter %d: %w", slot, err)
	}
	var tot Counter
	for _, c := range per {
		tot.Packets += c.Packets
		tot.Bytes += c.Bytes
	}
	return tot, per, nil
}

// GenSpec describes the live-frames generator program.
type GenSpec struct {
	Ifindex  int // bpf_redirect target: the sending veth
	Flows    int // >1: UDP source port = BasePort + n % Flows
	BasePort int
}

// LoadGenerator builds the live-frames generator: an XDP program that
// (optionally) rewrites the UDP source port and returns
// bpf_redirect(ifindex, 0).
func LoadGenerator(spec GenSpec) (*ebpf.Program, *ebpf.Map, error) {
	b := &progBuilder{}
	var it *ebpf.Map
	if spec.Flows > 1 {
		var err error
		it, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rxsim_gen_it", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: 1})
		if err != nil {
			return nil, nil, bpfLoadErr("generator map", err)
		}
		b.add(asm.Mov.Reg(asm.R6, asm.R1))
		b.lookup(it, 0, "redir")
		b.iterate(int32(spec.Flows))
		b.add(
			asm.Add.Imm(asm.R8, int32(spec.BasePort)),
			asm.HostTo(asm.BE, asm.R8, asm.Half),
			asm.LoadMem(asm.R2, asm.R6, 0, asm.Word),
			asm.LoadMem(asm.R3, asm.R6, 4, asm.Word),
			asm.Mov.Reg(asm.R4, asm.R2),
			asm.Add.Imm(asm.R4, 42),
			asm.JGT.Reg(asm.R4, asm.R3, "redir"),
			asm.StoreMem(asm.R2, 34, asm.R8, asm.Half),
		)
		b.label("redir")
	}
	b.add(
		asm.Mov.Imm(asm.R1, int32(spec.Ifindex)),
		asm.Mov.Imm(asm.R2, 0),
		asm.FnRedirect.Call(),
		asm.Return(),
	)
	p, err := ebpf.NewProgram(&ebpf.ProgramSpec{
		Name:         "rxsim_gen",
		Type:         ebpf.XDP,
		License:      "GPL",
		Instructions: b.done(),
	})
	if err != nil {
		if it != nil {
			it.Close()
		}
		return nil, nil, bpfLoadErr("rxsim_gen", err)
	}
	return p, it, nil
}
