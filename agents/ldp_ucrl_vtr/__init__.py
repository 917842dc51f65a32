"""LDP-UCRL-VTR (Liao, He & Gu 2021): UCRL-VTR under local differential privacy.

The agent and its release schedule (:mod:`.ldp_ucrl_vtr`) and its batched twin (:mod:`.batched`).
"""
