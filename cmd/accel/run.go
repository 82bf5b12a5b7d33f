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
const runSynopsis = `accel run OP [--backend opencl|vulkan|reference] [--device SEL] [--param name=value]... [--in NAME=FILE.npy]... [--out DIR] [--json]
       accel run --batch JOBS.jsonl [--backend opencl|vulkan|reference] [--device SEL]
Runs an op on .npy inputs (little-endian, C order: <i4 <i8 <u4 <u8 <f2 <f4 <f8 |b1)
and prints one line per output: name, dtype, shape, the first values and
the SHA-256 of its bytes (--json: one JSON object instead). With --out it
also writes DIR/<output>.npy per output; an input the op rejects then
leaves DIR/error.txt with the message and no arrays (exit status 1 for a
single run either way). The backend is --backend's, else the one --device
or $ACCEL_DEVICE names (opencl:0 is OpenCL's; --device reference is the
scalar reference), else the default device's.
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
		printFlags(fs, fs.Output())
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
	backend := fs.String("backend", "", "opencl, vulkan or reference (the scalar reference on the host); default: the backend --device or $ACCEL_DEVICE names")
	device := fs.String("device", "", "device selector: opencl:0, vulkan:llvmpipe, reference, or an index/name for --backend (default $ACCEL_DEVICE)")
	asJSON := fs.Bool("json", false, "print the run as one JSON object: op, device, outputs (name, dtype, shape, first values, sha256) or error")
	batch := fs.String("batch", "", "JSON-lines file of jobs: {\"op\", \"params\", \"inputs\", \"out\"}")
	out := fs.String("out", "", "output directory: one OUTPUT.npy per output, or error.txt (optional for a single run)")
	var params, ins multi
	fs.Var(&params, "param", "op parameter name=value (repeatable)")
	fs.Var(&ins, "in", "input NAME=FILE.npy (repeatable)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return flagExit(err)
	}
	switch *backend {
	case "reference", "opencl", "vulkan", "":
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
	b := runBackend(*backend, *device)
	var dev *accel.Device
	if b == "" {
		dev, err = accel.Open(*device) // the default device, or a name on either backend
	} else {
		dev, err = openFor(b, *device)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "accel run:", err)
		return 1
	}
	where := "reference"
	if dev != nil {
		defer dev.Close()
		where = dev.String()
	}
	if *batch != "" {
		return runBatch(dev, *batch)
	}
	res, msg, outs := runJob(dev, j)
	if *asJSON {
		r := map[string]any{"op": j.Op, "device": where}
		if res == jobOK {
			ss := summaries(outs)
			for i := range ss {
				if j.Out != "" {
					ss[i].File = filepath.Join(j.Out, ss[i].Name+".npy")
				}
			}
			r["outputs"] = ss
		} else {
			r["error"], r["rejected"] = msg, res == jobRejected
		}
		if code := printJSON(r); code != 0 {
			return code
		}
	}
	if res != jobOK {
		fmt.Fprintln(os.Stderr, "accel run:", msg)
		return 1
	}
	if !*asJSON {
		fmt.Printf("%s on %s\n", j.Op, where)
		for _, s := range summaries(outs) {
			if j.Out != "" {
				s.File = filepath.Join(j.Out, s.Name+".npy")
			}
			fmt.Println("  " + s.line())
		}
	}
	return 0
}

// runBackend picks the backend of `accel run`: --backend's, else the one
// --device or $ACCEL_DEVICE names ("opencl:0" is OpenCL's, "reference" the
// reference's), else "" (the default device, on whichever backend).
func runBackend(backend, device string) string {
	if backend != "" {
		return backend
	}
	sel := device
	if sel == "" {
		sel = os.Getenv("ACCEL_DEVICE")
	}
	b, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(sel)), ":")
	switch b {
	case "opencl", "vulkan", "reference":
		return b
	}
	return ""
}

// singleJob builds the job of a single `accel run` from its positional
// arguments and flags.
func singleJob(pos []string, out string, params, ins []string) (job, error) {
	if len(pos) != 1 {
		return job{}, fmt.Errorf("want one OP (%s), got arguments %q", opNames(), pos)
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

// runJob runs one job and returns its outputs; with an out directory it
// writes them there, or error.txt with the reason and no arrays.
func runJob(dev *accel.Device, j job) (jobResult, string, map[string]*accel.Tensor) {
	fail := func(res jobResult, err error) (jobResult, string, map[string]*accel.Tensor) {
		msg := err.Error()
		if j.Out == "" {
			return res, msg, nil
		}
		if e := os.MkdirAll(j.Out, 0o755); e == nil {
			removeArrays(j.Out)
			os.WriteFile(filepath.Join(j.Out, "error.txt"), []byte(msg+"\n"), 0o644)
		}
		return res, msg, nil
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
	if j.Out == "" {
		return jobOK, "", outs
	}
	if err := os.MkdirAll(j.Out, 0o755); err != nil {
		return jobFailed, err.Error(), nil
	}
	os.Remove(filepath.Join(j.Out, "error.txt"))
	for name, t := range outs {
		if err := writeNpy(filepath.Join(j.Out, name+".npy"), t); err != nil {
			return fail(jobFailed, err)
		}
	}
	return jobOK, "", outs
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
		if j.Out == "" {
			fmt.Fprintf(os.Stderr, "%s:%d: failed: job has no \"out\" directory\n", path, line)
			failed++
			continue
		}
		switch res, msg, _ := runJob(dev, j); res {
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
