package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rxsim/rxsim/validate"
)

func TestCalibrateFlags(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.json")
	set := &validate.MeasurementSet{Format: validate.MeasurementFormat, Results: []*validate.Result{
		{Scenario: "veth-xdp-drop", RxPPS: 1e6, Settings: validate.Options{Gen: validate.GenOptions{Kind: validate.GenAFPacket}}}}}
	if err := validate.Save(path, set); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"missing file", []string{"--measurements", filepath.Join(dir, "none.json")}, exitUsage, "no such file"},
		{"unknown holdout", []string{"--measurements", path, "--holdout", "veth-xdp-drop/live"}, exitUsage, "no such target"},
		{"positional", []string{"--measurements", path, "extra"}, exitUsage, "unexpected argument"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := mainErr(&out, &errb, append([]string{"calibrate"}, c.args...))
			if code != c.code || !strings.Contains(errb.String(), c.msg) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, errb.String(), c.code, c.msg)
			}
		})
	}
}
