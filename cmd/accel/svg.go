package main

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"os"
	"sort"
	"strings"

	"github.com/accelkern/accel/cmd/accel/internal/bench"
)

// ratioBar is one bar of the comparison chart: a workload against one
// peer, Ratio = the peer's time / ours (over 1: ours is faster).
type ratioBar struct {
	Workload, Peer string
	Ratio          float64
}

// sideBySide is the JSON a side-by-side run writes (bench/results/
// *-side-by-side-*.json): our and the peers' times per workload.
type sideBySide struct {
	Date    string `json:"date"`
	Backend string `json:"backend"`
	Device  string `json:"device"`
	Nproc   int    `json:"nproc"`
	Rows    []struct {
		Workload  string  `json:"workload"`
		Peer      string  `json:"peer"`
		RatioWarm float64 `json:"ratio_warm"`
	} `json:"rows"`
}

// peerBars reads a side-by-side JSON file into bars and the chart's title,
// which names the file's device, else device (the one the run was on, as
// the caller's --device picks it on this machine), else the backend.
func peerBars(path, device string) ([]ratioBar, string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	var s sideBySide
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, "", fmt.Errorf("%s: %v", path, err)
	}
	var bars []ratioBar
	for _, r := range s.Rows {
		if r.RatioWarm > 0 {
			bars = append(bars, ratioBar{r.Workload, r.Peer, r.RatioWarm})
		}
	}
	if len(bars) == 0 {
		return nil, "", fmt.Errorf("%s: no rows with a ratio_warm", path)
	}
	dev := s.Device
	if dev == "" {
		dev = device
	}
	if dev == "" {
		dev = fmt.Sprintf("an %s device (%d cores)", s.Backend, s.Nproc)
	}
	return bars, fmt.Sprintf("accel on %s vs peers (%s)", dev, s.Date), nil
}

// refBars makes bars of a bench run against the scalar Go reference.
func refBars(rs []bench.Result) ([]ratioBar, string) {
	var bars []ratioBar
	devs := map[string]bool{}
	var names []string
	for _, r := range rs {
		if r.MedianS > 0 && r.RefMedianS > 0 {
			bars = append(bars, ratioBar{r.Op + "/" + r.Case, "Go ref, " + r.Backend, r.RefMedianS / r.MedianS})
			if name := r.Backend + ": " + r.Device; !devs[name] {
				devs[name] = true
				names = append(names, name)
			}
		}
	}
	return bars, "accel on " + strings.Join(names, ", ") + " vs the scalar Go reference"
}

// writeRatioSVG draws bars as a horizontal bar chart of ratios on a log
// scale around 1 (right: ours faster), one bar per workload and peer,
// grouped by workload, with the title (naming the device) on top.
func writeRatioSVG(w io.Writer, title string, bars []ratioBar) error {
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].Workload < bars[j].Workload })
	const plotW, barH, gap, top = 420, 16, 4, 64
	// labels: the workload from the left edge, the peer right-aligned
	// before the plot (about 6.5 px a character at 11 px)
	wl, pl := 0, 0
	for _, b := range bars {
		wl, pl = max(wl, len(b.Workload)), max(pl, len(b.Peer))
	}
	labelW := 8 + int(6.5*float64(wl+pl)) + 24
	// the axis spans the ratios, at least 1/4 to 4, in powers of 2
	lo, hi := -2.0, 2.0
	for _, b := range bars {
		l := math.Log2(b.Ratio)
		lo, hi = math.Min(lo, math.Floor(l)), math.Max(hi, math.Ceil(l))
	}
	x := func(r float64) float64 { return float64(labelW) + (math.Log2(r)-lo)/(hi-lo)*plotW }
	height := top + len(bars)*(barH+gap) + 40
	width := labelW + plotW + 70
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", width, height)
	fmt.Fprintf(&sb, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&sb, `<text x="8" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&sb, `<text x="8" y="36">peer's time / ours, warm, log scale: right of 1 ours is faster</text>`+"\n")
	for p := lo; p <= hi; p++ {
		r := math.Pow(2, p)
		label := fmt.Sprintf("%gx", r)
		if r < 1 {
			label = fmt.Sprintf("1/%gx", 1/r)
		}
		stroke := "#ddd"
		if p == 0 {
			stroke = "#333"
		}
		fmt.Fprintf(&sb, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s"/>`+"\n", x(r), top-6, x(r), height-30, stroke)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d" text-anchor="middle">%s</text>`+"\n", x(r), height-16, label)
	}
	prev := ""
	for i, b := range bars {
		y := top + i*(barH+gap)
		name := b.Workload
		if name == prev {
			name = ""
		}
		prev = b.Workload
		fmt.Fprintf(&sb, `<text x="8" y="%d">%s</text>`+"\n", y+12, html.EscapeString(name))
		fmt.Fprintf(&sb, `<text x="%d" y="%d" text-anchor="end" fill="#555">%s</text>`+"\n", labelW-6, y+12, html.EscapeString(b.Peer))
		x0, x1 := x(1), x(b.Ratio)
		fill := "#2a7ab9"
		if x1 < x0 {
			x0, x1, fill = x1, x0, "#d9822b"
		}
		fmt.Fprintf(&sb, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", x0, y, math.Max(x1-x0, 1), barH, fill)
		fmt.Fprintf(&sb, `<text x="%.1f" y="%d">%.2gx</text>`+"\n", math.Max(x(b.Ratio), x(1))+4, y+12, b.Ratio)
	}
	sb.WriteString("</svg>\n")
	_, err := io.WriteString(w, sb.String())
	return err
}

// saveRatioSVG writes the chart to path.
func saveRatioSVG(path, title string, bars []ratioBar) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := writeRatioSVG(f, title, bars); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
