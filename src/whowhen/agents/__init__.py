"""What agent systems are made of, whatever the benchmark: the scripted systems' shared
shells and slip model (`scripted`) and the model-played ReAct agent (`llm_policy`).
Which (system, benchmark) pairs exist is the registry's business (`whowhen.registry`)."""
