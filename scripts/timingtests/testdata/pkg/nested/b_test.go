package nested

func TestInNestedModule(t *testing.T) { testkit.NeedTiming(t) }
