package kernels

import "github.com/accelkern/accel/host"

// CallOf is the arguments of a launch of an entry of the kernel file whose
// variants have type V (ScatterVariant for scatter's entries): every
// generated argument struct is one, for its own file's V.
type CallOf[V ~string] interface {
	host.Call
	// Spec returns the entry's kernel of variant v.
	Spec(v V) host.KernelSpec
}

// Dispatch is host.Dispatch with a typed variant: a variant of another
// file than the call's does not compile, e.g.
//
//	kernels.Dispatch(dev, kernels.ScatterI32, plan, kernels.ScatterValidate{...})
func Dispatch[V ~string, C CallOf[V]](dev host.Device, v V, plan host.Plan, call C) error {
	return host.Dispatch(dev, string(v), plan, call)
}
