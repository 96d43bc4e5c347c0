package report

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/fleetsim/fleetsim/fleet/result"
)

func TestJSONRoundTrip(t *testing.T) {
	for _, r := range append([]*result.Report{herdReport(), behindReport(), brokenReport()}, sweepReports()...) {
		t.Run(name(r), func(t *testing.T) {
			var buf bytes.Buffer
			if err := WriteJSON(&buf, one(r)); err != nil {
				t.Fatal(err)
			}
			got, err := ReadJSON(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			// WriteJSON writes missing lists as []: compare with that form.
			want := *r
			if want.Records == nil {
				want.Records = []result.Record{}
			}
			if want.Samples == nil {
				want.Samples = []result.Sample{}
			}
			if want.Verdicts == nil {
				want.Verdicts = []result.Verdict{}
			}
			if want.Result.Deploys == nil {
				want.Result.Deploys = []result.DeployResult{}
			}
			if !reflect.DeepEqual(got, &want) {
				t.Errorf("round trip changed the report:\ngot  %+v\nwant %+v", got.Result, want.Result)
			}
			// And the same bytes again: the output is stable.
			var again bytes.Buffer
			if err := WriteJSON(&again, one(got)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf.Bytes(), again.Bytes()) {
				t.Error("writing the read report gave different bytes")
			}
		})
	}
}

func TestJSONShape(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteJSON(&buf, one(brokenReport())); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	// A reader iterates these without a null check.
	for _, k := range []string{"records", "samples", "expectations"} {
		if _, ok := m[k].([]any); !ok {
			t.Errorf("%s = %v, want an array", k, m[k])
		}
	}
	if d, ok := m["result"].(map[string]any)["deploys"].([]any); !ok || len(d) != 0 {
		t.Errorf("result.deploys = %v, want []", m["result"].(map[string]any)["deploys"])
	}
	if m["error"] != brokenReport().Err {
		t.Errorf("error = %v", m["error"])
	}
	// Indented, and a check's < is not escaped to \u003c.
	buf.Reset()
	if err := WriteJSON(&buf, one(herdReport())); err != nil {
		t.Fatal(err)
	}
	s := buf.String()
	if !strings.Contains(s, "\n  \"scenario\": \"thundering-herd\",\n") {
		t.Error("not indented by two spaces")
	}
	if !strings.Contains(s, `"check": "deploys[0].duration < 120"`) {
		t.Error("check text escaped or missing")
	}
}

func TestReadJSONErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"syntax", "{\n  \"scenario\": \"x\",\n  oops\n}", "line 3 col 3"},
		{"type", "{\n  \"scenario\": 5\n}", "line 2 col"},
		{"empty", "", "unexpected end"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadJSON(strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestWriteJSONNaN(t *testing.T) {
	r := herdReport()
	r.Result.Heartbeat.CoalescedRatio = nanValue()
	if err := WriteJSON(&bytes.Buffer{}, one(r)); err == nil || !strings.Contains(err.Error(), "thundering-herd") {
		t.Fatalf("err = %v, want an error naming the report", err)
	}
}
