"""What agent systems are made of, whatever the benchmark: the scripted systems' shared
shells and slip model (`scripted`), and models playing those systems' roles (`team`,
through the text protocol of `protocol`). Which (system, benchmark) pairs exist is the
registry's business (`whowhen.registry`)."""
