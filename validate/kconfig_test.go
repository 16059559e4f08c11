package validate

import (
	"strings"
	"testing"
)

func TestParseKernelConfig(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     KernelConfig
		err      string
	}{
		{"validation VM", "CONFIG_PREEMPT_NONE=y\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\nCONFIG_HZ_250=y\nCONFIG_HZ=250\n",
			KernelConfig{HZ: 250, Preempt: "none"}, ""},
		{"irq time accounting", "CONFIG_HZ=1000\nCONFIG_IRQ_TIME_ACCOUNTING=y\nCONFIG_PREEMPT_VOLUNTARY=y\n",
			KernelConfig{HZ: 1000, IRQTimeAccounting: true, Preempt: "voluntary"}, ""},
		{"no HZ", "CONFIG_IRQ_TIME_ACCOUNTING=y\n", KernelConfig{}, "CONFIG_HZ: missing"},
		{"bad HZ", "CONFIG_HZ=fast\n", KernelConfig{}, `line 1: CONFIG_HZ="fast"`},
		{"zero HZ", "\nCONFIG_HZ=0\n", KernelConfig{}, "line 2: CONFIG_HZ"},
	} {
		t.Run(c.name, func(t *testing.T) {
			kc, err := ParseKernelConfig(strings.NewReader(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err %v, want it to contain %q", err, c.err)
				}
				return
			}
			if err != nil || *kc != c.want {
				t.Fatalf("got %+v, %v; want %+v", kc, err, c.want)
			}
		})
	}
}

func FuzzParseKernelConfig(f *testing.F) {
	f.Add("CONFIG_HZ=250\n# CONFIG_IRQ_TIME_ACCOUNTING is not set\n")
	f.Add("CONFIG_HZ=-1\nCONFIG_PREEMPT=y")
	f.Fuzz(func(t *testing.T, in string) {
		kc, err := ParseKernelConfig(strings.NewReader(in))
		if err == nil && kc.HZ <= 0 {
			t.Fatalf("accepted HZ %d", kc.HZ)
		}
	})
}

// The running kernel's config, where it is exposed, parses.
func TestReadKernelConfig(t *testing.T) {
	kc, err := ReadKernelConfig()
	if err != nil {
		t.Skipf("no /proc/config.gz: %v", err)
	}
	if kc.HZ <= 0 {
		t.Errorf("HZ %d", kc.HZ)
	}
}
