package readback

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// CheckSelector says whether s is what --fleet.selector takes: PromQL
// label matchers without the braces, `name op "value"` separated by
// commas, op one of = != =~ !~ (docs/fleet.md, "Fleet figures (replica 0)").
// The reader puts s inside its own braces, so a selector that does not
// parse would fail every query after every run; checked at start, it
// fails once, naming what is wrong.
func CheckSelector(s string) error {
	rest := strings.TrimSpace(s)
	if strings.HasPrefix(rest, "{") {
		return fmt.Errorf("%q: write the label matchers without braces, e.g. job=\"loadprobe\", not {job=\"loadprobe\"}", s)
	}
	for rest != "" {
		var err error
		if rest, err = matcher(rest); err != nil {
			return fmt.Errorf("%q: %w", s, err)
		}
		rest = strings.TrimSpace(rest)
		if rest == "" {
			break
		}
		if rest[0] != ',' {
			return fmt.Errorf("%q: %q follows a matcher, where a comma or the end belongs", s, rest)
		}
		rest = strings.TrimSpace(rest[1:])
	}
	return nil
}

var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*`)

// matcher reads one `name op "value"` off the start of s and returns the
// rest.
func matcher(s string) (string, error) {
	name := labelName.FindString(s)
	switch name {
	case "":
		return "", fmt.Errorf("%q: a label name belongs here", s)
	case "__name__":
		return "", fmt.Errorf("%q: the reader picks the metric names itself; match other labels", s)
	}
	s = strings.TrimSpace(s[len(name):])
	var op string
	for _, o := range []string{"=~", "!~", "!=", "="} {
		if strings.HasPrefix(s, o) {
			op = o
			break
		}
	}
	if op == "" {
		return "", fmt.Errorf("%q: one of = != =~ !~ belongs after the label name %s", s, name)
	}
	s = strings.TrimSpace(s[len(op):])
	value, rest, err := quoted(s)
	if err != nil {
		return "", fmt.Errorf("label %s: %w", name, err)
	}
	if op == "=~" || op == "!~" {
		if _, err := regexp.Compile("^(?s:" + value + ")$"); err != nil {
			return "", fmt.Errorf("label %s: %w", name, err)
		}
	}
	return rest, nil
}

// quoted reads a PromQL string, in double quotes (with Go's escapes) or
// backquotes, off the start of s.
func quoted(s string) (value, rest string, err error) {
	if s == "" || (s[0] != '"' && s[0] != '`') {
		return "", "", fmt.Errorf("%q: a value in double quotes belongs here", s)
	}
	end := 1
	for end < len(s) && s[end] != s[0] {
		if s[0] == '"' && s[end] == '\\' {
			end++
		}
		end++
	}
	if end >= len(s) {
		return "", "", fmt.Errorf("%q: the value's quote is never closed", s)
	}
	value, err = strconv.Unquote(s[:end+1])
	if err != nil {
		return "", "", fmt.Errorf("%q: %w", s[:end+1], err)
	}
	return value, s[end+1:], nil
}
