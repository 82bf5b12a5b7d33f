package accel

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDocComments requires a doc comment on every exported name of every
// non-test Go file in the module (the house rule; go vet does not check it).
func TestDocComments(t *testing.T) {
	fset := token.NewFileSet()
	var missing []string
	err := filepath.WalkDir("..", func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() && (strings.HasPrefix(e.Name(), ".") && path != ".." || e.Name() == "testdata") {
			return filepath.SkipDir
		}
		if e.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			return err
		}
		if f.Doc == nil && f.Name.Name != "main" && !hasPackageDoc(filepath.Dir(path), fset) {
			missing = append(missing, fmt.Sprintf("%s: package %s has no doc comment", path, f.Name.Name))
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && d.Doc == nil && (d.Recv == nil || exportedRecv(d.Recv)) {
					missing = append(missing, fmt.Sprintf("%s: func %s has no doc comment", fset.Position(d.Pos()), d.Name.Name))
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && s.Doc == nil && d.Doc == nil {
							missing = append(missing, fmt.Sprintf("%s: type %s has no doc comment", fset.Position(s.Pos()), s.Name.Name))
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Doc == nil && d.Doc == nil && s.Comment == nil {
								missing = append(missing, fmt.Sprintf("%s: %s has no doc comment", fset.Position(n.Pos()), n.Name))
							}
						}
					}
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, missing, "exported names without a doc comment")
}

func exportedRecv(fl *ast.FieldList) bool {
	if len(fl.List) == 0 {
		return false
	}
	typ := fl.List[0].Type
	if s, ok := typ.(*ast.StarExpr); ok {
		typ = s.X
	}
	if ix, ok := typ.(*ast.IndexExpr); ok {
		typ = ix.X
	}
	id, ok := typ.(*ast.Ident)
	return ok && id.IsExported()
}

var pkgDocCache = map[string]bool{}

func hasPackageDoc(dir string, fset *token.FileSet) bool {
	if v, ok := pkgDocCache[dir]; ok {
		return v
	}
	pkgs, _ := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments|parser.PackageClauseOnly)
	found := false
	for _, p := range pkgs {
		for _, f := range p.Files {
			found = found || f.Doc != nil
		}
	}
	pkgDocCache[dir] = found
	return found
}
