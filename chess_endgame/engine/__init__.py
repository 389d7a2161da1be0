"""The engine: the one :class:`~.player.Player` service over the search driver, the time manager and the
evaluation, with the compiled core (:mod:`.core`) beneath them."""
