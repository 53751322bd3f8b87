package main

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"go.yaml.in/yaml/v3"
)

// urlProbe is run's flags for one URL probed without a config file
// (docs/commands.md, "Command line"), as `vegeta attack` or `k6 run`
// take it.
type urlProbe struct {
	url, concurrency, rate, search, step, timeout, method, body string
	headers                                                     []string
}

func addURLFlags(cmd *kingpin.CmdClause) *urlProbe {
	u := &urlProbe{}
	cmd.Flag("url", "Probe this URL without a config file: its host is the one allowed target. Takes one of --concurrency, --rate or --search.").PlaceHolder("URL").StringVar(&u.url)
	cmd.Flag("concurrency", "With --url: a closed-loop ramp of these levels, e.g. 1,2,4,8.").PlaceHolder("LEVELS").StringVar(&u.concurrency)
	cmd.Flag("rate", "With --url: an open-loop ramp of these rates per second, e.g. 100,200,400.").PlaceHolder("RATES").StringVar(&u.rate)
	cmd.Flag("search", "With --url: a capacity search, AXIS:FROM:MAX, e.g. concurrency:1:256 or rate:50:5000.").PlaceHolder("AXIS:FROM:MAX").StringVar(&u.search)
	cmd.Flag("step", "With --url: how long each level lasts (load.step_duration; default 5s).").PlaceHolder("DURATION").StringVar(&u.step)
	cmd.Flag("timeout", "With --url: the request's timeout (request.timeout; default 1s).").PlaceHolder("DURATION").StringVar(&u.timeout)
	cmd.Flag("header", "With --url: a request header, NAME:VALUE (repeatable).").PlaceHolder("NAME:VALUE").StringsVar(&u.headers)
	cmd.Flag("method", "With --url: the request's method (default GET).").StringVar(&u.method)
	cmd.Flag("body", "With --url: the request's body.").StringVar(&u.body)
	return u
}

// urlProbeName is the probe's name, and what its errors name as the file.
const urlProbeName = "url"

// given lists the flags of u that are set, --url apart.
func (u *urlProbe) given() []string {
	var out []string
	for _, f := range []struct {
		name string
		set  bool
	}{
		{"--concurrency", u.concurrency != ""}, {"--rate", u.rate != ""}, {"--search", u.search != ""},
		{"--step", u.step != ""}, {"--timeout", u.timeout != ""}, {"--header", len(u.headers) > 0},
		{"--method", u.method != ""}, {"--body", u.body != ""},
	} {
		if f.set {
			out = append(out, f.name)
		}
	}
	return out
}

// config writes the config of the one probe u describes, for config.Parse
// to check as it checks a file.
func (u *urlProbe) config() ([]byte, error) {
	target, err := url.Parse(u.url)
	if err != nil || target.Hostname() == "" {
		return nil, fmt.Errorf("--url=%s: want an absolute URL, such as http://127.0.0.1:8080/", u.url)
	}
	load := map[string]any{}
	var kinds []string
	for _, k := range []struct{ flag, key, levels string }{
		{"--concurrency", "concurrency", u.concurrency}, {"--rate", "rate", u.rate},
	} {
		if k.levels == "" {
			continue
		}
		kinds = append(kinds, k.flag)
		var levels []float64
		for f := range strings.SplitSeq(k.levels, ",") {
			v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
			if err != nil {
				return nil, fmt.Errorf("%s=%s: %q is not a number: want levels such as 1,2,4,8", k.flag, k.levels, strings.TrimSpace(f))
			}
			levels = append(levels, v)
		}
		load[k.key] = levels
	}
	if u.search != "" {
		kinds = append(kinds, "--search")
		axis, from, top, err := searchRange(u.search)
		if err != nil {
			return nil, fmt.Errorf("--search=%s: want AXIS:FROM:MAX, such as concurrency:1:256 or rate:50:5000", u.search)
		}
		load["search"] = map[string]any{axis: map[string]float64{"from": from, "max": top}}
	}
	switch len(kinds) {
	case 0:
		return nil, errors.New("--url takes one of --concurrency, --rate or --search")
	case 1:
	default:
		return nil, fmt.Errorf("--url takes one of --concurrency, --rate or --search, not %s", strings.Join(kinds, " and "))
	}
	if u.step != "" {
		load["step_duration"] = u.step
	}
	request := map[string]any{"url": u.url}
	for key, v := range map[string]string{"timeout": u.timeout, "method": u.method, "body": u.body} {
		if v != "" {
			request[key] = v
		}
	}
	if len(u.headers) > 0 {
		headers := map[string]string{}
		for _, h := range u.headers {
			name, value, ok := strings.Cut(h, ":")
			if !ok {
				return nil, fmt.Errorf("--header=%s: want NAME:VALUE", h)
			}
			headers[strings.TrimSpace(name)] = strings.TrimSpace(value)
		}
		request["headers"] = headers
	}
	return yaml.Marshal(map[string]any{
		"allowed_targets": []string{target.Hostname()},
		"probes":          []any{map[string]any{"name": urlProbeName, "request": request, "load": load}},
	})
}

// searchRange reads --search's AXIS:FROM:MAX.
func searchRange(text string) (axis string, from, top float64, err error) {
	parts := strings.Split(text, ":")
	if len(parts) != 3 || parts[0] != "concurrency" && parts[0] != "rate" {
		return "", 0, 0, errors.New("not AXIS:FROM:MAX")
	}
	if from, err = strconv.ParseFloat(parts[1], 64); err == nil {
		top, err = strconv.ParseFloat(parts[2], 64)
	}
	return parts[0], from, top, err
}

// configKeyLine is a line of a config error about the probe's key path.
var configKeyLine = regexp.MustCompile(`(?m)^` + urlProbeName + `:\d+: (?:probes\[0\]\.)?([a-z_]+(?:\.[a-z_]+)?)(\S*): `)

// flagsOf are the flags that set each config key a --url probe has.
var flagsOf = map[string]string{
	"request.url": "--url", "load.concurrency": "--concurrency", "load.rate": "--rate", "load.search": "--search",
	"load.step_duration": "--step", "request.timeout": "--timeout", "request.headers": "--header",
	"request.method": "--method", "request.body": "--body",
}

// flagErrors says a config error of the probe u wrote in terms of its
// flags: "--concurrency: levels must increase (got 2 after 4)".
func flagErrors(err error) error {
	return errors.New(configKeyLine.ReplaceAllStringFunc(err.Error(), func(line string) string {
		m := configKeyLine.FindStringSubmatch(line)
		if flag, ok := flagsOf[m[1]]; ok {
			return flag + m[2] + ": "
		}
		return "--url's probe: " + m[1] + m[2] + ": "
	}))
}
