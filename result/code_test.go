package result

import (
	"encoding/json"
	"maps"
	"testing"
)

// Codes are named in JSON as the metrics label them, and read back.
func TestCodesJSONNamesTheCodes(t *testing.T) {
	in := Codes{200: 5, 503: 1, GRPCCode(0): 7, GRPCCode(14): 2, GRPCNotServing: 3, CodeOther: 4}
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
	if GRPCCode(99) != GRPCCode(2) || CodeName(GRPCCode(8)) != "RESOURCE_EXHAUSTED" || CodeName(429) != "429" {
		t.Error("code names")
	}
}
