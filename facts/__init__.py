"""Facts about Azure, AKS, Kubernetes and the Pulumi SDKs, as data with their sources.

One home per fact: the config model, the planners, the components, the policy packs and the
tests read them from here. Nothing in this package imports anything else from the project,
so any module may import it. Each module says where its facts come from and how to refresh
them.
"""
