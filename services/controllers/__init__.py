"""kapi controllers: the reconcile loops kube-controller-manager runs, plus the seeds' tenant loops."""
