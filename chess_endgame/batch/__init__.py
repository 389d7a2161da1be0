"""The batch runner: many independent tasks (suite positions, games to review, self-play games) on local
processes (``--jobs``) or Ray actors on a cluster (``--cluster``)."""
