package readmodel

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestPure holds the package to what makes a replayed log fold like the live run: no I/O, no
// clock, no goroutines. It reads the package's own source, tests left out.
func TestPure(t *testing.T) {
	allowed := map[string]bool{
		"cmp": true, "fmt": true, "math": true, "slices": true, "strings": true, "time": true, "unicode/utf8": true,
		"massgen/internal/event": true, "massgen/internal/coord": true, "massgen/internal/provider": true, "massgen/internal/usage": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			if !allowed[path] {
				t.Errorf("%s imports %s: the fold does no I/O (add it here only if it is pure)", name, path)
			}
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.GoStmt:
				t.Errorf("%s: a go statement: the fold starts no goroutines", fset.Position(n.Pos()))
			case *ast.SelectorExpr:
				if x, ok := n.X.(*ast.Ident); ok && x.Name == "time" && (n.Sel.Name == "Now" || n.Sel.Name == "Since" || n.Sel.Name == "Until") {
					t.Errorf("%s: time.%s: the fold's times come from events", fset.Position(n.Pos()), n.Sel.Name)
				}
			}
			return true
		})
	}
}
