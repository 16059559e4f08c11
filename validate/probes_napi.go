package validate

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/cilium/ebpf/asm"
	"github.com/cilium/ebpf/btf"
)

// ifNameSize is IFNAMSIZ, the size of net_device.name.
const ifNameSize = 16

// napiDevOffsets returns the byte offsets of napi_struct.dev and
// net_device.name in the running kernel, from its BTF.
func napiDevOffsets() (dev, name uint32, err error) {
	spec, err := btf.LoadKernelSpec()
	if err != nil {
		return 0, 0, fmt.Errorf("validate: kernel BTF: %w", err)
	}
	if dev, err = memberOffset(spec, "napi_struct", "dev"); err != nil {
		return 0, 0, err
	}
	if name, err = memberOffset(spec, "net_device", "name"); err != nil {
		return 0, 0, err
	}
	return dev, name, nil
}

// memberOffset finds member of struct typ, looking into anonymous structs
// and unions, and returns its byte offset.
func memberOffset(spec *btf.Spec, typ, member string) (uint32, error) {
	var s *btf.Struct
	if err := spec.TypeByName(typ, &s); err != nil {
		return 0, fmt.Errorf("validate: BTF struct %s: %w", typ, err)
	}
	if off, ok := findMember(s.Members, member, 0); ok {
		return off, nil
	}
	return 0, fmt.Errorf("validate: BTF struct %s has no member %s", typ, member)
}

func findMember(ms []btf.Member, name string, base btf.Bits) (uint32, bool) {
	for _, m := range ms {
		off := base + m.Offset
		if m.Name == name {
			return uint32(off / 8), true
		}
		if m.Name != "" {
			continue
		}
		var inner []btf.Member
		switch t := btf.UnderlyingType(m.Type).(type) {
		case *btf.Struct:
			inner = t.Members
		case *btf.Union:
			inner = t.Members
		}
		if o, ok := findMember(inner, name, off); ok {
			return o, true
		}
	}
	return 0, false
}

// napiDevFilter returns the instructions that end the napi_poll program
// ("out") unless the polled NAPI belongs to the device named dev: they
// read napi->dev->name with bpf_probe_read_kernel and compare its 16 bytes.
// R6 must hold the context; R1-R5 are clobbered.
func napiDevFilter(dev string) (asm.Instructions, error) {
	if len(dev) >= ifNameSize {
		return nil, errors.New("validate: device name longer than IFNAMSIZ-1")
	}
	devOff, nameOff, err := napiDevOffsets()
	if err != nil {
		return nil, err
	}
	var name [ifNameSize]byte
	copy(name[:], dev)
	lo := int64(binary.LittleEndian.Uint64(name[:8]))
	hi := int64(binary.LittleEndian.Uint64(name[8:]))
	return asm.Instructions{
		asm.LoadMem(asm.R3, asm.R6, 0, asm.DWord), // napi
		asm.Add.Imm(asm.R3, int32(devOff)),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -8),
		asm.Mov.Imm(asm.R2, 8),
		asm.FnProbeReadKernel.Call(), // *(fp-8) = napi->dev
		asm.JNE.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R3, asm.R10, -8, asm.DWord),
		asm.Add.Imm(asm.R3, int32(nameOff)),
		asm.Mov.Reg(asm.R1, asm.R10),
		asm.Add.Imm(asm.R1, -24),
		asm.Mov.Imm(asm.R2, ifNameSize),
		asm.FnProbeReadKernel.Call(), // fp-24..fp-9 = dev->name
		asm.JNE.Imm(asm.R0, 0, "out"),
		asm.LoadMem(asm.R4, asm.R10, -24, asm.DWord),
		asm.LoadImm(asm.R5, lo, asm.DWord),
		asm.JNE.Reg(asm.R4, asm.R5, "out"),
		asm.LoadMem(asm.R4, asm.R10, -16, asm.DWord),
		asm.LoadImm(asm.R5, hi, asm.DWord),
		asm.JNE.Reg(asm.R4, asm.R5, "out"),
	}, nil
}
