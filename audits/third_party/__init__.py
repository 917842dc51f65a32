"""Third-party-style private agents with the bugs implementers really make, each next to its correct twin.

The modules are written as code outside dpverify would be — against the documented private-agent protocol
only (docs/auditing.md, "Third-party agents") — and are loaded by file path, e.g.
``dpverify verify --agent audits/third_party/noisy_lsvi.py:make_mean_for_sum``:

* :mod:`.noisy_lsvi` — a private least-squares value iteration whose statistics the billboard noises
  (:meth:`~dpverify.agents.core.billboard.Billboard.publish`); its bugs are in what the agent *records*: the
  sensitivity, the users a release reads, the relation, the stacking of several statistics;
* :mod:`.self_noised_lsvi` — the same learner adding its noise itself and recording each release with
  :meth:`~dpverify.agents.core.billboard.Billboard.publish_noised`; its bugs are in the noise it draws;
* :mod:`.laplace_counts` — a pure-DP visit-count agent with Laplace noise;
* :mod:`.laplace_ucb_bandit` — a UCB bandit with its own loop, bandit interface and noise, audited unedited
  through :mod:`.laplace_ucb_adapter` (:meth:`dpverify.adapters.ClosedLoopAgent.bandit`);
* :mod:`.tree_ucb_bandit` — a pure ε-DP UCB bandit on per-arm Laplace tree counters, audited unedited through
  :mod:`.tree_ucb_adapter`, which records every node with the rounds it read (a :class:`dpverify.ledger.UserSet`).

:data:`dpverify.audits.third_party_zoo.CASES` lists every factory with the verdict ``dpverify verify``
must reach.
"""
