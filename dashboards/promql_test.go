package dashboards

import (
	"sort"
	"strings"
)

// The dashboards test's scanner, not a parser: enough of PromQL's lexical structure to find the
// vector selectors, their matchers and ranges, and the functions called, in the
// expressions this package ships. Prometheus itself (promtool, or the server in the
// integration test) is the judge of whether an expression parses.

type token struct {
	kind byte // 'i' identifier, 's' string, 'n' number or duration, 'v' template variable, 'p' punctuation
	text string
}

func lex(expr string) []token {
	var toks []token
	for i := 0; i < len(expr); {
		c := expr[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '#': // comment to end of line
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		case c == '"' || c == '\'' || c == '`':
			j := i + 1
			var b strings.Builder
			for j < len(expr) && expr[j] != c {
				if expr[j] == '\\' && c != '`' && j+1 < len(expr) {
					j++
				}
				b.WriteByte(expr[j])
				j++
			}
			toks = append(toks, token{'s', b.String()})
			i = j + 1
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			toks = append(toks, token{'i', expr[i:j]})
			i = j
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(expr) && expr[i+1] >= '0' && expr[i+1] <= '9':
			j := i
			for j < len(expr) && (isIdentChar(expr[j]) || expr[j] == '.') {
				j++
			}
			toks = append(toks, token{'n', expr[i:j]})
			i = j
		case c == '$':
			j := i + 1
			if j < len(expr) && expr[j] == '{' {
				for j < len(expr) && expr[j] != '}' {
					j++
				}
				j++
			} else {
				for j < len(expr) && isIdentChar(expr[j]) {
					j++
				}
			}
			toks = append(toks, token{'v', expr[i:min(j, len(expr))]})
			i = j
		default:
			if i+1 < len(expr) {
				switch two := expr[i : i+2]; two {
				case "=~", "!~", "!=", "==", ">=", "<=":
					toks = append(toks, token{'p', two})
					i += 2
					continue
				}
			}
			toks = append(toks, token{'p', string(c)})
			i++
		}
	}
	return toks
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

type matcher struct{ label, op, value string }

type selector struct {
	name     string // metric name ("" when only matchers name it)
	matchers []matcher
}

type scan struct {
	selectors []selector
	ranges    []string // contents of every [...]: ranges and subqueries
	calls     []string // functions and aggregations, in order of appearance
}

var (
	labelListKeywords = map[string]bool{"by": true, "without": true, "on": true, "ignoring": true, "group_left": true, "group_right": true}
	otherKeywords     = map[string]bool{"and": true, "or": true, "unless": true, "bool": true, "offset": true, "atan2": true, "inf": true, "nan": true}
	aggregations      = map[string]bool{"sum": true, "avg": true, "count": true, "min": true, "max": true, "group": true, "stddev": true, "stdvar": true, "topk": true, "bottomk": true, "quantile": true, "count_values": true}
)

func scanExpr(expr string) scan {
	toks := lex(expr)
	var s scan
	next := func(i int) token {
		if i < len(toks) {
			return toks[i]
		}
		return token{}
	}
	skipGroup := func(i int, open, close string) int { // i at open; returns index after its close
		depth := 0
		for ; i < len(toks); i++ {
			if toks[i].kind == 'p' && toks[i].text == open {
				depth++
			} else if toks[i].kind == 'p' && toks[i].text == close {
				depth--
				if depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	matchers := func(i int) ([]matcher, int) { // i at '{'
		var ms []matcher
		i++
		for i < len(toks) && !(toks[i].kind == 'p' && toks[i].text == "}") {
			if toks[i].kind == 'i' && i+2 < len(toks) && toks[i+1].kind == 'p' && toks[i+2].kind == 's' {
				ms = append(ms, matcher{toks[i].text, toks[i+1].text, toks[i+2].text})
				i += 3
				continue
			}
			i++
		}
		return ms, i + 1
	}
	for i := 0; i < len(toks); {
		t := toks[i]
		switch {
		case t.kind == 'i':
			low := strings.ToLower(t.text)
			nt := next(i + 1)
			switch {
			case labelListKeywords[low]:
				if nt.kind == 'p' && nt.text == "(" {
					i = skipGroup(i+1, "(", ")")
				} else {
					i++
				}
			case otherKeywords[low]:
				i++
				if low == "offset" {
					if next(i).text == "-" {
						i++
					}
					i++
				}
			case nt.kind == 'p' && nt.text == "(",
				aggregations[low] && nt.kind == 'i' && (nt.text == "by" || nt.text == "without"):
				s.calls = append(s.calls, t.text)
				i++
			default:
				sel := selector{name: t.text}
				i++
				if nt.kind == 'p' && nt.text == "{" {
					sel.matchers, i = matchers(i)
				}
				s.selectors = append(s.selectors, sel)
			}
		case t.kind == 'p' && t.text == "{":
			var sel selector
			sel.matchers, i = matchers(i)
			for _, m := range sel.matchers {
				if m.label == "__name__" && m.op == "=" {
					sel.name = m.value
				}
			}
			s.selectors = append(s.selectors, sel)
		case t.kind == 'p' && t.text == "[":
			end := skipGroup(i, "[", "]")
			var b strings.Builder
			for _, in := range toks[i+1 : max(i+1, end-1)] {
				b.WriteString(in.text)
			}
			s.ranges = append(s.ranges, b.String())
			i = end
		default:
			i++
		}
	}
	return s
}

// metricNames returns the metric names an expression selects, sorted and without
// duplicates: exported families (with their _bucket, _sum, _count or _total suffix as
// written), recording-rule names, and names Prometheus adds itself (up). A histogram
// queried in both storage forms appears twice: as name_bucket (classic) and as the bare
// name (native); only one of them holds data in any one Prometheus.
func metricNames(expr string) []string {
	seen := map[string]bool{}
	var names []string
	for _, sel := range scanExpr(expr).selectors {
		if sel.name != "" && !seen[sel.name] {
			seen[sel.name] = true
			names = append(names, sel.name)
		}
	}
	sort.Strings(names)
	return names
}
