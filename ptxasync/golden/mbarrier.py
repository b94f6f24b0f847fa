"""mbarrier families: mbarrier_semantics."""

FAMILIES = {}
