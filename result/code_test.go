package result

import (
	"encoding/json"
	"maps"
	"testing"
)

// Codes are named in JSON as the metrics label them, and read back.
func TestCodesJSONNamesTheCodes(t *testing.T) {
	in := Codes{HTTPStatus(200): 5, HTTPStatus(503): 1, GRPCStatus(0): 7, GRPCStatus(14): 2, GRPCNotServing: 3, CodeOther: 4}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"200":5,"503":1,"NOT_SERVING":3,"OK":7,"UNAVAILABLE":2,"other":4}`; string(b) != want {
		t.Errorf("JSON %s, want %s", b, want)
	}
	var out Codes
	if err := json.Unmarshal(b, &out); err != nil || !maps.Equal(out, in) {
		t.Errorf("read back %v (%v), want %v", out, err, in)
	}
	if err := json.Unmarshal([]byte(`{"SLOW":1}`), &out); err == nil {
		t.Error("an unknown code name was read")
	}
	if GRPCStatus(99) != GRPCStatus(2) || GRPCStatus(8).String() != "RESOURCE_EXHAUSTED" || HTTPStatus(429).String() != "429" {
		t.Error("code names")
	}
}

// A code's class says what it means whatever the protocol: the analysis
// reads the class, so an HTTP 429 and a gRPC RESOURCE_EXHAUSTED are one
// limiter, a 503 and an UNAVAILABLE one shedding server.
func TestCodesOfTwoProtocolsShareTheirClass(t *testing.T) {
	for _, tc := range []struct {
		codes []Code
		want  Class
	}{
		{[]Code{HTTPStatus(200), HTTPStatus(204), GRPCStatus(0)}, ClassSuccess},
		{[]Code{HTTPStatus(503), GRPCStatus(14)}, ClassShed},
		{[]Code{HTTPStatus(429), GRPCStatus(8)}, ClassLimited},
		{[]Code{HTTPStatus(408), HTTPStatus(504), GRPCStatus(4)}, ClassDeadline},
		{[]Code{HTTPStatus(400), HTTPStatus(404), GRPCStatus(3), GRPCStatus(12)}, ClassClientError},
		{[]Code{HTTPStatus(500), HTTPStatus(502), GRPCStatus(13), GRPCNotServing}, ClassServerError},
		{[]Code{HTTPStatus(301), HTTPStatus(302)}, ClassRedirect},
		{[]Code{HTTPStatus(101), HTTPStatus(600), CodeOther, {}}, ClassOther},
	} {
		for _, c := range tc.codes {
			if got := c.Class(); got != tc.want {
				t.Errorf("%s (%v): class %s, want %s", c, c.Protocol, got, tc.want)
			}
		}
	}
}

// A code's slot in a table reads back as the code.
func TestCodeSlotsReadBack(t *testing.T) {
	for _, c := range []Code{{}, CodeOther, GRPCStatus(0), GRPCStatus(16), GRPCServingUnknown, HTTPStatus(100), HTTPStatus(999)} {
		if back := CodeAt(c.Slot()); back != c {
			t.Errorf("%v: slot %d reads back %v", c, c.Slot(), back)
		}
	}
}
