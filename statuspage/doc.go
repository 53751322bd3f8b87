// Package web serves loadprobe's status page: every probe's state and last
// breaking points, with a chart of its last ramp, from the binary alone
// (inline SVG, no script, nothing fetched from elsewhere). It owns the page's
// HTML and the chart's layout; it reads the probes' states and results and
// changes nothing. Every string on the page, the chart's included, goes
// through html/template, which escapes it for where it lands.
package statuspage
