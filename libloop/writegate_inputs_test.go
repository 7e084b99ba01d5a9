// SPDX-License-Identifier: MIT

package libloop

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeImporter gives every import an empty package: the check below needs
// the types of this package's own fields, not of what it imports, and the
// type checker goes on past the errors that leaves.
type fakeImporter struct{}

func (fakeImporter) Import(path string) (*types.Package, error) {
	p := types.NewPackage(path, filepath.Base(path))
	p.MarkComplete()
	return p, nil
}

// The write gate's inputs are written only by writegate.go's methods, each
// of which ends in regate: any other write of a Transport's state, pw,
// eofWritten or tls could leave DirectWritable stale, and a host would
// send on a closed fd or ahead of buffered bytes.
func TestWriteGateInputs(t *testing.T) {
	fset := token.NewFileSet()
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, p := range paths {
		if ok, err := build.Default.MatchFile(".", p); err != nil || !ok || strings.HasSuffix(p, "_test.go") {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, p, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	info := &types.Info{Selections: map[*ast.SelectorExpr]*types.Selection{}}
	conf := types.Config{Importer: fakeImporter{}, Error: func(error) {}}
	pkg, _ := conf.Check("libloop", fset, files, info)
	tr, _ := pkg.Scope().Lookup("Transport").Type().Underlying().(*types.Struct)
	if tr == nil {
		t.Fatal("no Transport struct")
	}
	inputs := map[types.Object]bool{}
	for i := 0; i < tr.NumFields(); i++ {
		switch f := tr.Field(i); f.Name() {
		case "state", "pw", "eofWritten", "tls":
			inputs[f] = true
		}
	}
	if len(inputs) != 4 {
		t.Fatalf("found %d of the gate's 4 inputs in Transport", len(inputs))
	}
	written := 0
	for _, f := range files {
		name := filepath.Base(fset.Position(f.Pos()).Filename)
		check := func(lhs ast.Expr) {
			sel, ok := lhs.(*ast.SelectorExpr)
			if !ok || info.Selections[sel] == nil || !inputs[info.Selections[sel].Obj()] {
				return
			}
			written++
			if name != "writegate.go" {
				t.Errorf("%s: %s written outside writegate.go: use its methods, which tell the host",
					fset.Position(sel.Pos()), sel.Sel.Name)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.AssignStmt:
				for _, lhs := range n.Lhs {
					check(lhs)
				}
			case *ast.IncDecStmt:
				check(n.X)
			case *ast.UnaryExpr:
				if n.Op == token.AND {
					check(n.X) // a pointer to an input could write it anywhere
				}
			}
			return true
		})
	}
	if written == 0 {
		t.Fatal("found no write of the gate's inputs at all: the check is blind")
	}
}
