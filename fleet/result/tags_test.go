package result

import (
	"bytes"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// jsonTag is the json tag a field whose expr tag is name gets: the same
// name, with the json tag's options (",omitempty") kept.
func jsonTag(name, json string) string {
	_, opts, _ := strings.Cut(json, ",")
	if opts != "" {
		opts = "," + opts
	}
	return name + opts
}

// TestJSONTagsFromExpr: a part of the Result names each field once, in
// its expr tag (the name an expectation reads); its json tag, the name in
// the JSON report, is derived from it. go test ./fleet/result -run
// TestJSONTagsFromExpr -update rewrites the json tags from the expr tags;
// a field with an expr tag and no json tag gets one.
func TestJSONTagsFromExpr(t *testing.T) {
	for _, file := range []string{"parts.go", "result.go", "window.go"} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		fields, changed := 0, false
		ast.Inspect(f, func(n ast.Node) bool {
			field, ok := n.(*ast.Field)
			if !ok || field.Tag == nil {
				return true
			}
			raw, _ := strconv.Unquote(field.Tag.Value)
			tag := reflect.StructTag(raw)
			name, ok := tag.Lookup("expr")
			if !ok || name == "-" {
				return true
			}
			fields++
			want := `expr:"` + name + `" json:"` + jsonTag(name, tag.Get("json")) + `"`
			if raw == want {
				return true
			}
			if !*update {
				t.Errorf("%s: tag `%s`, want `%s` (the json name is the expr name); run go test ./fleet/result -run TestJSONTagsFromExpr -update",
					fset.Position(field.Pos()), raw, want)
				return true
			}
			field.Tag.Value = "`" + want + "`"
			changed = true
			return true
		})
		if file == "parts.go" && fields < 100 {
			t.Errorf("%s: only %d fields with an expr tag: the search is broken", file, fields)
		}
		if changed {
			var b bytes.Buffer
			if err := format.Node(&b, fset, f); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}
