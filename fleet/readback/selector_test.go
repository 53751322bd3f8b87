package readback

import (
	"strings"
	"testing"
)

// --fleet.selector takes PromQL label matchers without braces; anything
// else is an error that says what is wrong, before any query is sent.
func TestCheckSelector(t *testing.T) {
	for _, tc := range []struct {
		selector, wantErr string
	}{
		{``, ""},
		{`job="loadprobe"`, ""},
		{` job = "capacity/loadprobe" , namespace=~"cap.*", pod!~"x|y", env!="dev", `, ""},
		{"job=`raw\\string`", ""},
		{`job="a \"quoted\" name"`, ""},
		{`{job="loadprobe"}`, "without braces"},
		{`job=loadprobe`, "a value in double quotes belongs here"},
		{`job="loadprobe`, "never closed"},
		{`job=="x"`, "a value in double quotes belongs here"},
		{`job~"x"`, "one of = != =~ !~"},
		{`job=~"("`, "missing closing )"},
		{`job="x" namespace="y"`, "where a comma or the end belongs"},
		{`__name__="up"`, "picks the metric names itself"},
		{`1job="x"`, "a label name belongs here"},
	} {
		err := CheckSelector(tc.selector)
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("%s: %v, want it accepted", tc.selector, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("%s: error %v, want one saying %q", tc.selector, err, tc.wantErr)
		}
	}
}
