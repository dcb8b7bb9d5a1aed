"""Taking a measurement: sampler arguments, requirements, load, environment, running the sampler, sessions."""
