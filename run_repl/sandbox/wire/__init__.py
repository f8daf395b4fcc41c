"""Values on the wire: the codec, nesting limits, value windows and result stores."""
