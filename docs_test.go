package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// readmeMaxLines keeps the README a front page: what loadprobe is, the
// first commands and the first probe, with the reference in docs/.
const readmeMaxLines = 300

func TestReadmeIsAFrontPage(t *testing.T) {
	text, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(text, []byte("\n")); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move reference material into docs/", n, readmeMaxLines)
	}
	// The first screen sets up with two commands, and no more.
	first, _, _ := strings.Cut(string(text), "\n## ")
	var commands []string
	for _, block := range regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(first, -1) {
		for line := range strings.Lines(block[1]) {
			if cmd, _, _ := strings.Cut(line, "#"); strings.TrimSpace(cmd) != "" {
				commands = append(commands, strings.TrimSpace(cmd))
			}
		}
	}
	if want := []string{"go run . demo", "make test"}; !slices.Equal(commands, want) {
		t.Errorf("the README's first screen runs %q, want exactly %q", commands, want)
	}
	// What it says promtool finds is what the rule files hold.
	rules, _ := os.ReadFile(filepath.Join("dashboards", "rules.yml"))
	alerts, _ := os.ReadFile(filepath.Join("dashboards", "alerts.yml"))
	counted := fmt.Sprintf("%d recording rules, %d alerts",
		bytes.Count(rules, []byte("- record:")), bytes.Count(alerts, []byte("- alert:")))
	if !strings.Contains(string(text), counted) {
		t.Errorf("the README does not say promtool finds %s", counted)
	}
	// What it says the demo runs is what the demo config holds: its probes,
	// and the targets their URLs reach, each at an address of its own.
	probes := len(regexp.MustCompile(`(?m)^  - name:`).FindAllString(demoConfig, -1))
	targets := map[string]bool{}
	for _, m := range regexp.MustCompile(`://(127\.0\.0\.\d+:\d+)`).FindAllStringSubmatch(demoConfig, -1) {
		targets[m[1]] = true
	}
	numbers := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	said := fmt.Sprintf("demo runs %s\nprobes against %s built-in demo targets", numbers[probes], numbers[len(targets)])
	if !strings.Contains(string(text), said) {
		t.Errorf("the README does not say what the demo config holds: %q", said)
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```[ \t]*$")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading  = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	withScheme = regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
)

// prose is a Markdown page without its code: fenced blocks and code spans
// hold text that looks like links and headings but is neither.
func prose(text []byte) string {
	s := fence.ReplaceAllString(string(text), "")
	return codeSpan.ReplaceAllStringFunc(s, func(span string) string { return strings.Trim(span, "`") })
}

// anchors are the fragment names a page's headings get on GitHub: the
// heading in lower case, without punctuation, spaces as hyphens, and a
// repeated one numbered.
func anchors(text []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(prose(text), -1) {
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		for i := 1; out[a]; i++ {
			a = fmt.Sprintf("%s-%d", b.String(), i)
		}
		out[a] = true
	}
	return out
}

// Every relative link of the README and of docs/ leads somewhere: its file
// exists, and its #fragment, into a Markdown page, names a heading there.
func TestDocsLinksResolve(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	checked := 0
	for _, page := range pages {
		text, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(prose(text), -1) {
			link := m[1]
			if withScheme.MatchString(link) {
				continue
			}
			checked++
			path, fragment, _ := strings.Cut(link, "#")
			target := page
			if path != "" {
				target = filepath.Join(filepath.Dir(page), path)
			}
			info, err := os.Stat(target)
			if err != nil {
				t.Errorf("%s: link %s: no such file %s", page, link, target)
				continue
			}
			if info.IsDir() || fragment == "" || filepath.Ext(target) != ".md" {
				continue
			}
			body, err := os.ReadFile(target)
			if err != nil {
				t.Fatal(err)
			}
			if !anchors(body)[fragment] {
				t.Errorf("%s: link %s: %s has no heading #%s", page, link, target, fragment)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative link found: the link pattern is broken")
	}
}

var (
	commentJoin = regexp.MustCompile(`\n[ \t]*(//|#)[ \t]*`)
	citation    = regexp.MustCompile(`docs/([a-z0-9_-]+\.md)(?:, "([^"]+)")?`)
)

// headings are the headings of a page as a reader sees them.
func headings(text []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(prose(text), -1) {
		out[m[1]] = true
	}
	return out
}

// The code's comments cite the docs a reader has, as docs/<page>.md or
// docs/<page>.md, "<section>": every page cited exists, and every section
// cited is a heading of it.
func TestCodeCitesDocsThatExist(t *testing.T) {
	cited := 0
	err := filepath.WalkDir(".", func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != "." && (strings.HasPrefix(name, ".") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".yml", ".yaml":
		default:
			if d.Name() != "Makefile" && d.Name() != "Dockerfile" {
				return nil
			}
		}
		text, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range citation.FindAllStringSubmatch(commentJoin.ReplaceAllString(string(text), " "), -1) {
			cited++
			page, err := os.ReadFile(filepath.Join("docs", m[1]))
			if err != nil {
				t.Errorf("%s cites docs/%s, which does not exist", path, m[1])
				continue
			}
			if m[2] != "" && !headings(page)[m[2]] {
				t.Errorf("%s cites docs/%s, %q, which is not a heading there", path, m[1], m[2])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if cited == 0 {
		t.Fatal("no citation of docs/ found: the pattern is broken")
	}
}
