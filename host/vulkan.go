package host

// Placeholder until the Vulkan backend lands.

func vulkanEnumerate(opts Options) ([]Caps, error) { return nil, ErrNoDevice }

func vulkanOpen(index int, opts Options) (Device, error) { return nil, ErrNoDevice }
