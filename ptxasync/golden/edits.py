"""Tensor-map edit families: tensormap_replace, tensormap_replace_load."""

FAMILIES = {}
