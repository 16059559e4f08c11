package validate

import (
	"errors"
	"fmt"

	"github.com/cilium/ebpf"
	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/link"
)

// NapiHistSize is the size of the napi_poll work histogram: work 0..64,
// where 64 collects every poll that did 64 or more.
const NapiHistSize = 65

// napiFullBudget is the slot of the napi map counting polls with work >=
// budget.
const napiFullBudget = NapiHistSize

// Probes are the raw-tracepoint counters: xdp_cpumap_enqueue,
// xdp_cpumap_kthread and napi_poll. They cost throughput; attach them only
// for a separate probe run.
type Probes struct {
	Enqueue *ebpf.Map // per-CPU (from) array indexed by to_cpu: enqStat
	Kthread *ebpf.Map // per-CPU (kthread's CPU) array, 1 entry: kthStat
	Napi    *ebpf.Map // per-CPU array of u64: work histogram + full-budget count
	progs   []*ebpf.Program
	links   []link.Link
}

type enqStat struct{ Processed, Drops, Events uint64 }
type kthStat struct{ Processed, Drops, Sched, Events uint64 }

// ProbeCounts is a snapshot of the probes, summed where noted.
type ProbeCounts struct {
	// Enq[from][to]
	Enq [][]enqStat
	// Kth[cpu]
	Kth []kthStat
	// NapiHist[cpu][work]
	NapiHist [][]uint64
	// NapiFull[cpu]: polls with work >= budget
	NapiFull []uint64
}

// addTo emits *(u64*)(R0+off) += src.
func addTo(off int16, src asm.Register) asm.Instructions {
	return asm.Instructions{
		asm.LoadMem(asm.R1, asm.R0, off, asm.DWord),
		asm.Add.Reg(asm.R1, src),
		asm.StoreMem(asm.R0, off, asm.R1, asm.DWord),
	}
}

func lookupKey(m *ebpf.Map, keyReg asm.Register, miss string) asm.Instructions {
	return asm.Instructions{
		asm.StoreMem(asm.R10, -4, keyReg, asm.Word),
		asm.Mov.Reg(asm.R2, asm.R10),
		asm.Add.Imm(asm.R2, -4),
		asm.LoadMapPtr(asm.R1, m.FD()),
		asm.FnMapLookupElem.Call(),
		asm.JEq.Imm(asm.R0, 0, miss),
	}
}

// AttachProbes loads and attaches the three raw tracepoints. It needs no
// tracefs. With dev set, napi_poll counts only the NAPIs of that device
// (by name, read through the kernel's BTF offsets), not every NAPI on the
// machine.
func AttachProbes(dev string) (p *Probes, err error) {
	p = &Probes{}
	defer func() {
		if err != nil {
			p.Close()
		}
	}()
	ncpu := uint32(possibleCPUs())
	if p.Enqueue, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rxsim_enq", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 24, MaxEntries: ncpu}); err != nil {
		return p, bpfLoadErr("enqueue map", err)
	}
	if p.Kthread, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rxsim_kth", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 32, MaxEntries: 1}); err != nil {
		return p, bpfLoadErr("kthread map", err)
	}
	if p.Napi, err = ebpf.NewMap(&ebpf.MapSpec{Name: "rxsim_napi", Type: ebpf.PerCPUArray, KeySize: 4, ValueSize: 8, MaxEntries: NapiHistSize + 1}); err != nil {
		return p, bpfLoadErr("napi map", err)
	}
	one := asm.Instructions{asm.Mov.Imm(asm.R9, 1)}
	ret := asm.Instructions{asm.Mov.Imm(asm.R0, 0).WithSymbol("out"), asm.Return()}

	// xdp_cpumap_enqueue(map_id, processed, drops, to_cpu)
	enq := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.LoadMem(asm.R7, asm.R6, 8, asm.DWord),
		asm.LoadMem(asm.R8, asm.R6, 16, asm.DWord),
		asm.LoadMem(asm.R2, asm.R6, 24, asm.DWord),
	}
	enq = append(enq, lookupKey(p.Enqueue, asm.R2, "out")...)
	enq = append(enq, addTo(0, asm.R7)...)
	enq = append(enq, addTo(8, asm.R8)...)
	enq = append(enq, one...)
	enq = append(enq, addTo(16, asm.R9)...)
	enq = append(enq, ret...)

	// xdp_cpumap_kthread(map_id, processed, drops, sched, stats)
	kth := asm.Instructions{
		asm.Mov.Reg(asm.R6, asm.R1),
		asm.Mov.Imm(asm.R2, 0),
	}
	kth = append(kth, lookupKey(p.Kthread, asm.R2, "out")...)
	kth = append(kth,
		asm.LoadMem(asm.R7, asm.R6, 8, asm.DWord),
		asm.LoadMem(asm.R8, asm.R6, 16, asm.DWord),
		asm.LoadMem(asm.R9, asm.R6, 24, asm.DWord),
		// R9 = (sched != 0)
		asm.Mov.Imm(asm.R5, 0),
		asm.JEq.Imm32(asm.R9, 0, "nosched"),
		asm.Mov.Imm(asm.R5, 1),
		asm.Mov.Reg(asm.R9, asm.R5).WithSymbol("nosched"),
	)
	kth = append(kth, addTo(0, asm.R7)...)
	kth = append(kth, addTo(8, asm.R8)...)
	kth = append(kth, addTo(16, asm.R9)...)
	kth = append(kth, asm.Mov.Imm(asm.R9, 1))
	kth = append(kth, addTo(24, asm.R9)...)
	kth = append(kth, ret...)

	// napi_poll(napi, work, budget)
	napi := asm.Instructions{asm.Mov.Reg(asm.R6, asm.R1)}
	if dev != "" {
		f, err := napiDevFilter(dev)
		if err != nil {
			return p, err
		}
		napi = append(napi, f...)
	}
	napi = append(napi,
		asm.LoadMem(asm.R7, asm.R6, 8, asm.DWord),  // work
		asm.LoadMem(asm.R8, asm.R6, 16, asm.DWord), // budget
		asm.Mov.Reg32(asm.R2, asm.R7),
		asm.JLE.Imm32(asm.R2, NapiHistSize-1, "inrange"),
		asm.Mov.Imm(asm.R2, NapiHistSize-1),
		asm.Mov.Imm(asm.R9, 1).WithSymbol("inrange"),
	)
	napi = append(napi, lookupKey(p.Napi, asm.R2, "full")...)
	napi = append(napi, addTo(0, asm.R9)...)
	napi = append(napi,
		asm.JLT.Reg32(asm.R7, asm.R8, "out").WithSymbol("full"),
		asm.JEq.Imm32(asm.R8, 0, "out"),
		asm.Mov.Imm(asm.R2, napiFullBudget),
	)
	napi = append(napi, lookupKey(p.Napi, asm.R2, "out")...)
	napi = append(napi, asm.Mov.Imm(asm.R9, 1))
	napi = append(napi, addTo(0, asm.R9)...)
	napi = append(napi, ret...)

	for _, tp := range []struct {
		name, tp string
		insns    asm.Instructions
	}{
		{"rxsim_tp_enq", "xdp_cpumap_enqueue", enq},
		{"rxsim_tp_kth", "xdp_cpumap_kthread", kth},
		{"rxsim_tp_napi", "napi_poll", napi},
	} {
		prog, err := ebpf.NewProgram(&ebpf.ProgramSpec{Name: tp.name, Type: ebpf.RawTracepoint, License: "GPL", Instructions: tp.insns})
		if err != nil {
			return p, bpfLoadErr(tp.name, err)
		}
		p.progs = append(p.progs, prog)
		l, err := link.AttachRawTracepoint(link.RawTracepointOptions{Name: tp.tp, Program: prog})
		if err != nil {
			if errors.Is(err, ebpf.ErrNotSupported) {
				return p, fmt.Errorf("validate: raw tracepoint %s: %w: %w", tp.tp, ErrNotSupported, err)
			}
			return p, fmt.Errorf("validate: attach raw tracepoint %s: %w", tp.tp, err)
		}
		p.links = append(p.links, l)
	}
	return p, nil
}

// Read snapshots every probe counter.
func (p *Probes) Read() (ProbeCounts, error) {
	var c ProbeCounts
	ncpu := possibleCPUs()
	c.Enq = make([][]enqStat, ncpu)
	for from := range c.Enq {
		c.Enq[from] = make([]enqStat, ncpu)
	}
	for to := 0; to < ncpu; to++ {
		var per []enqStat
		if err := p.Enqueue.Lookup(uint32(to), &per); err != nil {
			return c, err
		}
		for from, v := range per {
			c.Enq[from][to] = v
		}
	}
	if err := p.Kthread.Lookup(uint32(0), &c.Kth); err != nil {
		return c, err
	}
	c.NapiHist = make([][]uint64, ncpu)
	for cpu := range c.NapiHist {
		c.NapiHist[cpu] = make([]uint64, NapiHistSize)
	}
	for w := 0; w < NapiHistSize; w++ {
		var per []uint64
		if err := p.Napi.Lookup(uint32(w), &per); err != nil {
			return c, err
		}
		for cpu, v := range per {
			c.NapiHist[cpu][w] = v
		}
	}
	if err := p.Napi.Lookup(uint32(napiFullBudget), &c.NapiFull); err != nil {
		return c, err
	}
	return c, nil
}

// Close detaches and unloads the probes.
func (p *Probes) Close() {
	if p == nil {
		return
	}
	for _, l := range p.links {
		l.Close()
	}
	for _, pr := range p.progs {
		pr.Close()
	}
	for _, m := range []*ebpf.Map{p.Enqueue, p.Kthread, p.Napi} {
		if m != nil {
			m.Close()
		}
	}
}
