package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/accelkern/accel/accel"
)

// job is one line of a batch file, or the flags of a single run.
type job struct {
	Op     string                 `json:"op"`
	Params map[string]interface{} `json:"params"`
	Inputs map[string]string      `json:"inputs"`
	Out    string                 `json:"out"`
}

// jobResult says how a job ended.
type jobResult int

const (
	jobOK       jobResult = iota // outputs written
	jobRejected                  // error.txt written: the input was rejected
	jobFailed                    // error.txt written: a device or I/O failure
)

func cmdRun(args []string) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	backend := fs.String("backend", "", "opencl, vulkan or reference")
	device := fs.String("device", "", "device selector (index or name substring; default $ACCEL_DEVICE)")
	batch := fs.String("batch", "", "JSON-lines file of jobs: {\"op\", \"params\", \"inputs\", \"out\"}")
	out := fs.String("out", "", "output directory: one OUTPUT.npy per output, or error.txt")
	var params, ins multi
	fs.Var(&params, "param", "op parameter name=value (repeatable)")
	fs.Var(&ins, "in", "input NAME=FILE.npy (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return 2
	}
	if *backend == "" {
		fmt.Fprintln(os.Stderr, "accel run: --backend opencl|vulkan|reference is required")
		return 2
	}
	dev, err := openBackend(*backend, *device)
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel run:", err)
		return 1
	}
	if dev != nil {
		defer dev.Close()
	}
	if *batch != "" {
		return runBatch(dev, *batch)
	}
	if len(pos) != 1 || *out == "" {
		fmt.Fprintf(os.Stderr, "accel run: want one OP (%s) and --out DIR\n", opNames())
		return 2
	}
	j := job{Op: pos[0], Params: map[string]interface{}{}, Inputs: map[string]string{}, Out: *out}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "accel run: --param %q: want name=value\n", p)
			return 2
		}
		j.Params[k] = v
	}
	for _, in := range ins {
		k, v, ok := strings.Cut(in, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "accel run: --in %q: want NAME=FILE.npy\n", in)
			return 2
		}
		j.Inputs[k] = v
	}
	if res, msg := runJob(dev, j); res != jobOK {
		fmt.Fprintln(os.Stderr, "accel run:", msg)
		return 1
	}
	return 0
}

// paramString converts a JSON parameter value to the op's string form,
// keeping integers exact.
func paramString(v interface{}) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return fmt.Sprint(x), nil
	case nil:
		return "none", nil // e.g. axis: null (NumPy's axis=None)
	}
	return "", fmt.Errorf("unsupported JSON value %v", v)
}

// runJob runs one job and writes its outputs, or error.txt with the reason
// and no arrays.
func runJob(dev *accel.Device, j job) (jobResult, string) {
	fail := func(res jobResult, err error) (jobResult, string) {
		msg := err.Error()
		if e := os.MkdirAll(j.Out, 0o755); e == nil {
			removeArrays(j.Out)
			os.WriteFile(filepath.Join(j.Out, "error.txt"), []byte(msg+"\n"), 0o644)
		}
		return res, msg
	}
	if j.Out == "" {
		return jobFailed, "job has no \"out\" directory"
	}
	params := map[string]string{}
	for k, v := range j.Params {
		s, err := paramString(v)
		if err != nil {
			return fail(jobRejected, fmt.Errorf("%s: param %s: %v: %w", j.Op, k, err, accel.ErrInvalidArgument))
		}
		params[k] = s
	}
	inputs := map[string]*accel.Tensor{}
	for name, path := range j.Inputs {
		t, err := readNpy(path)
		if err != nil {
			return fail(jobFailed, fmt.Errorf("%s: input %s: %w", j.Op, name, err))
		}
		inputs[name] = t
	}
	outs, err := accel.RunOp(dev, j.Op, params, inputs)
	if err != nil {
		if rejected(err) {
			return fail(jobRejected, err)
		}
		return fail(jobFailed, err)
	}
	if err := os.MkdirAll(j.Out, 0o755); err != nil {
		return jobFailed, err.Error()
	}
	os.Remove(filepath.Join(j.Out, "error.txt"))
	for name, t := range outs {
		if err := writeNpy(filepath.Join(j.Out, name+".npy"), t); err != nil {
			return fail(jobFailed, err)
		}
	}
	return jobOK, ""
}

// removeArrays deletes .npy files left in dir by an earlier run, so a
// rejected job leaves error.txt alone.
func removeArrays(dir string) {
	m, _ := filepath.Glob(filepath.Join(dir, "*.npy"))
	for _, f := range m {
		os.Remove(f)
	}
}

// runBatch runs every job of a JSON-lines file on one device. Relative
// input paths and out directories are relative to the current directory.
func runBatch(dev *accel.Device, path string) int {
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel run --batch:", err)
		return 1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	var ok, rej, failed, line int
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(text))
		dec.UseNumber()
		var j job
		if err := dec.Decode(&j); err != nil {
			fmt.Fprintf(os.Stderr, "%s:%d: malformed job: %v\n", path, line, err)
			failed++
			continue
		}
		switch res, msg := runJob(dev, j); res {
		case jobOK:
			ok++
		case jobRejected:
			rej++
			fmt.Fprintf(os.Stderr, "%s:%d: rejected: %s\n", path, line, msg)
		default:
			failed++
			fmt.Fprintf(os.Stderr, "%s:%d: failed: %s\n", path, line, msg)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "accel run --batch:", err)
		failed++
	}
	fmt.Printf("%d jobs: %d ok, %d rejected, %d failed\n", ok+rej+failed, ok, rej, failed)
	if failed > 0 {
		return 1
	}
	return 0
}
