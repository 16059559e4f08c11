package sim

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoWallClock: no non-test file under sim/ or models/ reads the wall
// clock (time.Now, time.Since, time.Until), however the time package is
// imported. Simulated time is data.
func TestNoWallClock(t *testing.T) {
	root := ".." // the module root: go test runs in the package directory
	checked := 0
	for _, dir := range []string{"sim", "models"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				if dir == "models" && d == nil {
					return fs.SkipDir // no models yet
				}
				return err
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return fs.SkipDir
			}
			if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			checked++
			for _, use := range wallClockUses(t, path) {
				t.Errorf("%s: %s reads the wall clock; use simulated time (sim.Time)", use, path)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if checked < 5 {
		t.Fatalf("checked only %d files: is the module root %s?", checked, root)
	}
}

func wallClockUses(t *testing.T, path string) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, 0)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	names := map[string]bool{}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "time" {
			name := "time"
			if imp.Name != nil {
				name = imp.Name.Name
			}
			if name == "." {
				t.Errorf("%s: dot-imports time", path)
			}
			names[name] = true
		}
	}
	var uses []string
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		if x, ok := sel.X.(*ast.Ident); ok && names[x.Name] {
			switch sel.Sel.Name {
			case "Now", "Since", "Until":
				uses = append(uses, fset.Position(sel.Pos()).String()+": "+x.Name+"."+sel.Sel.Name)
			}
		}
		return true
	})
	return uses
}
