"""What the agent families share; nothing here imports a family (the runner builds agents by name).

The agent protocol and episodes (:mod:`.base`), exact planning (:mod:`.planning`), the no-data controls
(:mod:`.learning`), sufficient statistics (:mod:`.statistics`, :mod:`.linalg`, :mod:`.noise_bounds`),
the billboard and the private-agent protocol (:mod:`.billboard`, :mod:`.private`), the running-sum
counters (:mod:`.dyadic_tree`, :mod:`.factorised_sum`), user tapes and the batched twins' randomness
(:mod:`.tapes`, :mod:`.batching`) and the experiment runner behind ``dpverify run`` (:mod:`.runner`).
"""
