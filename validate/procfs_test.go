package validate

import (
	"os"
	"strings"
	"testing"
)

func TestParseSoftnet(t *testing.T) {
	f, err := os.Open("testdata/softnet_stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseSoftnet(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].Processed != 0xbe048 || rows[1].CPU != 1 || rows[1].Processed != 0xc02a6 {
		t.Errorf("testdata rows = %+v", rows)
	}
	for _, tc := range []struct {
		name, in string
		want     []SoftnetRow
		err      bool
	}{
		{"one row", "0000000a 00000001 00000002 0 0 0 0 0 0 00000003 00000004 00000000 00000005\n",
			[]SoftnetRow{{CPU: 5, Processed: 10, Dropped: 1, TimeSqueeze: 2, ReceivedRPS: 3, FlowLimit: 4}}, false},
		{"old kernel, no cpu column", "1 2 3 0 0 0 0 0 0 4\n5 6 7 0 0 0 0 0 0 8\n",
			[]SoftnetRow{{CPU: 0, Processed: 1, Dropped: 2, TimeSqueeze: 3, ReceivedRPS: 4}, {CPU: 1, Processed: 5, Dropped: 6, TimeSqueeze: 7, ReceivedRPS: 8}}, false},
		{"blank lines", "\n1 2 3 0 0 0 0 0 0 4\n\n", []SoftnetRow{{Processed: 1, Dropped: 2, TimeSqueeze: 3, ReceivedRPS: 4}}, false},
		{"too few columns", "1 2 3\n", nil, true},
		{"not hex", "zz 2 3 0 0 0 0 0 0 4\n", nil, true},
		{"empty", "", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSoftnet(strings.NewReader(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}

func TestParseSNMP(t *testing.T) {
	f, err := os.Open("testdata/snmp.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := ParseSNMP(f)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"Ip", "Icmp", "Tcp", "Udp", "UdpLite"} {
		if len(s[p]) == 0 {
			t.Errorf("testdata: no %s fields", p)
		}
	}
	if _, ok := s["Udp"]["RcvbufErrors"]; !ok {
		t.Error("testdata: no Udp RcvbufErrors")
	}
	for _, tc := range []struct {
		name, in string
		proto    string
		field    string
		want     int64
		err      bool
	}{
		{"pair", "Udp: InDatagrams NoPorts\nUdp: 5 7\n", "Udp", "NoPorts", 7, false},
		{"two protos", "Tcp: InSegs\nTcp: 3\nUdp: NoPorts\nUdp: -1\n", "Udp", "NoPorts", -1, false},
		{"missing field", "Udp: InDatagrams\nUdp: 5\n", "Udp", "NoPorts", 0, false},
		{"count mismatch", "Udp: A B\nUdp: 1\n", "", "", 0, true},
		{"names only", "Udp: A B\n", "", "", 0, true},
		{"no colon", "garbage\n", "", "", 0, true},
		{"not a number", "Udp: A\nUdp: x\n", "", "", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := ParseSNMP(strings.NewReader(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if err == nil && s.Get(tc.proto, tc.field) != tc.want {
				t.Errorf("%s %s = %d, want %d", tc.proto, tc.field, s.Get(tc.proto, tc.field), tc.want)
			}
		})
	}
}

func TestParseProcStat(t *testing.T) {
	f, err := os.Open("testdata/proc_stat.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := ParseProcStat(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || rows[0].CPU != 0 || rows[1].CPU != 1 || rows[0].User != 66289 || rows[1].SoftIRQ != 124 || rows[0].Steal != 156 {
		t.Errorf("testdata rows = %+v", rows)
	}
	for _, tc := range []struct {
		name, in string
		want     []CPUTimes
		err      bool
	}{
		{"aggregate skipped", "cpu 1 2 3 4 5 6 7 8 9 10\ncpu3 1 2 3 4 5 6 7 8 0 0\nintr 5 6\n",
			[]CPUTimes{{CPU: 3, User: 1, Nice: 2, System: 3, Idle: 4, IOWait: 5, IRQ: 6, SoftIRQ: 7, Steal: 8}}, false},
		{"short row", "cpu0 1 2 3\n", nil, true},
		{"bad cpu", "cpux 1 2 3 4 5 6 7 8\n", nil, true},
		{"bad value", "cpu0 1 2 3 4 5 6 7 -8\n", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseProcStat(strings.NewReader(tc.in))
			if (err != nil) != tc.err {
				t.Fatalf("err = %v, want error %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("row %d = %+v, want %+v", i, got[i], tc.want[i])
				}
			}
			if len(got) == 1 && got[0].Total() != 36 {
				t.Errorf("Total = %d, want 36", got[0].Total())
			}
		})
	}
}

func seedFile(f *testing.F, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

func FuzzParseSoftnet(f *testing.F) {
	seedFile(f, "testdata/softnet_stat.txt")
	f.Add("1 2 3 0 0 0 0 0 0 4\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseSoftnet(strings.NewReader(in))
		if err == nil && len(rows) > strings.Count(in, "\n")+1 {
			t.Fatalf("%d rows from %d lines", len(rows), strings.Count(in, "\n")+1)
		}
	})
}

func FuzzParseSNMP(f *testing.F) {
	seedFile(f, "testdata/snmp.txt")
	f.Add("Udp: A B\nUdp: 1 2\n")
	f.Fuzz(func(t *testing.T, in string) {
		s, err := ParseSNMP(strings.NewReader(in))
		if err == nil {
			for p, m := range s {
				if strings.Contains(p, "\n") || m == nil {
					t.Fatalf("bad protocol %q", p)
				}
			}
		}
	})
}

func FuzzParseProcStat(f *testing.F) {
	seedFile(f, "testdata/proc_stat.txt")
	f.Add("cpu0 1 2 3 4 5 6 7 8\n")
	f.Fuzz(func(t *testing.T, in string) {
		rows, err := ParseProcStat(strings.NewReader(in))
		if err == nil {
			for _, r := range rows {
				if r.CPU < 0 {
					t.Fatalf("negative CPU %d", r.CPU)
				}
			}
		}
	})
}
