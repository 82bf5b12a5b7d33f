package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/accelkern/accel/accel"
	"github.com/accelkern/accel/cmd/accel/internal/ops"
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

// runSynopsis is the help text of `accel run`.
const runSynopsis = `accel run OP --backend opencl|vulkan|reference [--device SEL] [--param name=value]... [--in NAME=FILE.npy]... --out DIR
       accel run --batch JOBS.jsonl --backend opencl|vulkan|reference [--device SEL]
Runs an op on .npy inputs (little-endian, C order: <i4 <i8 <u4 <u8 <f2 <f4 <f8 |b1)
and writes DIR/<output>.npy per output. An input the op rejects leaves
DIR/error.txt with the message and no arrays (exit status 1 for a single run).
Batch: one JSON object per line,
  {"op": "tril_indices", "params": {"row": 3, "col": 3}, "inputs": {"name": "x.npy"}, "out": "dir"}
params values may be strings, numbers (integers kept exact) or booleans;
relative input paths and out directories are relative to the current
directory. The device is opened once; a rejected job writes its error.txt
and the batch goes on. Exit status 0 when every job ended in its outputs or
a rejection, 1 for malformed lines, unreadable files or device failures.`

func cmdRun(args []string) int {
	fs := newFlagSet("run", runSynopsis)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "usage: ")
		fmt.Fprintln(fs.Output(), strings.TrimSpace(runSynopsis))
		fs.PrintDefaults()
		fmt.Fprintln(fs.Output(), "ops (name: parameters; inputs -> outputs):")
		for _, op := range ops.Ops() {
			var ps []string
			for _, p := range op.Params {
				switch {
				case p.Required:
					ps = append(ps, p.Name)
				case p.Default != "":
					ps = append(ps, p.Name+"="+p.Default)
				default:
					ps = append(ps, "["+p.Name+"]")
				}
			}
			fmt.Fprintf(fs.Output(), "  %s: %s; %s -> %s\n", op.Name, strings.Join(ps, " "),
				strings.Join(op.Inputs, ", "), strings.Join(op.Outputs, ", "))
		}
	}
	backend := fs.String("backend", "", "opencl, vulkan or reference (the scalar reference on the host)")
	device := fs.String("device", "", "device selector: opencl:0, vulkan:llvmpipe, or an index/name for --backend (default $ACCEL_DEVICE when it names the same backend)")
	batch := fs.String("batch", "", "JSON-lines file of jobs: {\"op\", \"params\", \"inputs\", \"out\"}")
	out := fs.String("out", "", "output directory: one OUTPUT.npy per output, or error.txt")
	var params, ins multi
	fs.Var(&params, "param", "op parameter name=value (repeatable)")
	fs.Var(&ins, "in", "input NAME=FILE.npy (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	switch *backend {
	case "reference", "opencl", "vulkan":
	case "":
		fmt.Fprintln(os.Stderr, "accel run: --backend opencl|vulkan|reference is required")
		return 2
	default:
		fmt.Fprintf(os.Stderr, "accel run: --backend %q: must be opencl, vulkan or reference\n", *backend)
		return 2
	}
	var j job
	if *batch != "" {
		if len(pos) > 0 || *out != "" || len(params) > 0 || len(ins) > 0 {
			fmt.Fprintln(os.Stderr, "accel run: --batch takes no OP, --out, --param or --in (they are in the job lines)")
			return 2
		}
	} else if j, err = singleJob(pos, *out, params, ins); err != nil {
		fmt.Fprintln(os.Stderr, "accel run:", err)
		return 2
	}
	dev, err := openFor(*backend, *device)
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
	if res, msg := runJob(dev, j); res != jobOK {
		fmt.Fprintln(os.Stderr, "accel run:", msg)
		return 1
	}
	return 0
}

// singleJob builds the job of a single `accel run` from its positional
// arguments and flags.
func singleJob(pos []string, out string, params, ins []string) (job, error) {
	if len(pos) != 1 || out == "" {
		return job{}, fmt.Errorf("want one OP (%s) and --out DIR, got arguments %q", opNames(), pos)
	}
	j := job{Op: pos[0], Params: map[string]interface{}{}, Inputs: map[string]string{}, Out: out}
	for _, p := range params {
		k, v, ok := strings.Cut(p, "=")
		if !ok || k == "" {
			return job{}, fmt.Errorf("--param %q: want name=value", p)
		}
		if _, dup := j.Params[k]; dup {
			return job{}, fmt.Errorf("--param %s given twice", k)
		}
		j.Params[k] = v
	}
	for _, in := range ins {
		k, v, ok := strings.Cut(in, "=")
		if !ok || k == "" || v == "" {
			return job{}, fmt.Errorf("--in %q: want NAME=FILE.npy", in)
		}
		if _, dup := j.Inputs[k]; dup {
			return job{}, fmt.Errorf("--in %s given twice", k)
		}
		j.Inputs[k] = v
	}
	return j, nil
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
	case []interface{}:
		// a list parameter: the comma-separated form of the command line
		parts := make([]string, len(x))
		for i, e := range x {
			if _, nested := e.([]interface{}); nested {
				return "", fmt.Errorf("nested list %v", v)
			}
			s, err := paramString(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
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
			// A file in a format this tool does not take (big-endian,
			// Fortran order, another dtype) is a rejection of the input;
			// a missing or corrupt file is a failure.
			res := jobFailed
			if rejected(err) || errors.Is(err, errNpyFormat) {
				res = jobRejected
			}
			return fail(res, fmt.Errorf("%s: input %s: %w", j.Op, name, err))
		}
		inputs[name] = t
	}
	outs, err := ops.Run(dev, j.Op, params, inputs)
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
