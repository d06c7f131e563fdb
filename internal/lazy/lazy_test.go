package lazy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Every lazy.Regexp in massgen compiles: a bad expression would otherwise panic at its first
// use, deep in a run, instead of at start as regexp.MustCompile in an initialiser did.
func TestEveryRegexpCompiles(t *testing.T) {
	fset := token.NewFileSet()
	seen := 0
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) != 1 {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != "Regexp" || !isIdent(sel.X, "lazy") {
				return true
			}
			expr, ok := literal(call.Args[0])
			if !ok {
				t.Errorf("%s: lazy.Regexp of a non-literal: this test cannot check it", fset.Position(call.Pos()))
				return true
			}
			if _, err := regexp.Compile(expr); err != nil {
				t.Errorf("%s: %v", fset.Position(call.Pos()), err)
			}
			seen++
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 10 {
		t.Errorf("found %d lazy.Regexp calls under internal/: is the walk looking in the right place?", seen)
	}
}

// literal is the value of a string literal or a sum of them.
func literal(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		s, err := strconv.Unquote(e.Value)
		return s, err == nil && e.Kind == token.STRING
	case *ast.ParenExpr:
		return literal(e.X)
	case *ast.BinaryExpr:
		a, ok1 := literal(e.X)
		b, ok2 := literal(e.Y)
		return a + b, ok1 && ok2 && e.Op == token.ADD
	}
	return "", false
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

func TestRegexp_CompilesOnceOnFirstUse(t *testing.T) {
	re := Regexp(`^a+$`)
	if first, again := re(), re(); first != again || !first.MatchString("aaa") {
		t.Errorf("Regexp gave %p then %p", first, again)
	}
}

// No package of massgen compiles a regular expression in its initialiser: every start would
// pay for it (issue 22). Tests and test helpers may.
func TestNoRegexpCompiledAtStart(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && path != "../.." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "clitest") {
			return filepath.SkipDir // .ci's npm packages and the like; test helpers
		}
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.VAR {
				continue
			}
			ast.Inspect(g, func(n ast.Node) bool {
				if _, ok := n.(*ast.FuncLit); ok {
					return false // runs when called (sync.OnceValue), not at start
				}
				if sel, ok := n.(*ast.SelectorExpr); ok && isIdent(sel.X, "regexp") && strings.HasPrefix(sel.Sel.Name, "MustCompile") {
					t.Errorf("%s: a package-level regexp.%s runs at every start: use lazy.Regexp", fset.Position(sel.Pos()), sel.Sel.Name)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
