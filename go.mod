module github.com/accelkern/accel

go 1.22

require (
	github.com/sbinet/npyio v0.9.0
	github.com/stretchr/testify v1.9.0
	github.com/vulkan-go/vulkan v0.0.0-20221209234627-c0a353ae26c8
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/nlpodyssey/gopickle v0.3.0 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	golang.org/x/text v0.14.0 // indirect
	gonum.org/v1/gonum v0.14.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
