module github.com/accelkern/accel

go 1.22

require github.com/jgillich/go-opencl v0.0.0-20180608191952-a0efba3e5257
