package event

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestKinds_EveryPayload reads the package's source for every Type() method and checks that
// kinds lists the name it returns, once: a new payload type missing from kinds could be
// written to a log but not read back.
func TestKinds_EveryPayload(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var declared []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || fn.Name.Name != "Type" || fn.Type.Params.NumFields() != 0 || len(fn.Body.List) != 1 {
				continue
			}
			ret, ok := fn.Body.List[0].(*ast.ReturnStmt)
			if !ok || len(ret.Results) != 1 {
				continue
			}
			lit, ok := ret.Results[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				t.Errorf("%s: Type() does not return a string literal", fset.Position(fn.Pos()))
				continue
			}
			v, _ := strconv.Unquote(lit.Value)
			declared = append(declared, v)
		}
	}
	var listed []string
	for _, k := range kinds {
		if slices.Contains(listed, k.name) {
			t.Errorf("kinds lists %q twice", k.name)
		}
		listed = append(listed, k.name)
	}
	slices.Sort(declared)
	slices.Sort(listed)
	if !slices.Equal(declared, listed) {
		t.Errorf("payload types declared %v\nkinds lists %v", declared, listed)
	}
	if len(declared) < 30 {
		t.Errorf("found only %d Type() methods: is the parsing still right?", len(declared))
	}
}
