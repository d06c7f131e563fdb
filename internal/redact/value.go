package redact

import "reflect"

// maxDepth bounds how deep Value walks, against cycles through pointers.
const maxDepth = 32

// Value returns v with every string in it (struct fields, slice and map elements, through
// pointers and interfaces) redacted. v itself is not changed: what holds a secret is copied,
// and when nothing does v is returned as is. Unexported fields are copied unchanged.
func Value[T any](r *Redactor, v T) T {
	if r.Empty() {
		return v
	}
	rv := reflect.ValueOf(&v).Elem()
	if out, changed := r.value(rv, 0); changed {
		return out.Interface().(T)
	}
	return v
}

// value returns a redacted copy of v and true, or v and false when nothing in it changes.
func (r *Redactor) value(v reflect.Value, depth int) (reflect.Value, bool) {
	if depth > maxDepth {
		return v, false
	}
	switch v.Kind() {
	case reflect.String:
		s := v.String()
		red := r.String(s)
		if red == s {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.SetString(red)
		return out, true
	case reflect.Struct:
		var out reflect.Value
		t := v.Type()
		for i := range v.NumField() {
			if !t.Field(i).IsExported() {
				continue
			}
			f, changed := r.value(v.Field(i), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.New(t).Elem()
				out.Set(v)
			}
			out.Field(i).Set(f)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Slice, reflect.Array:
		var out reflect.Value
		for i := range v.Len() {
			e, changed := r.value(v.Index(i), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				if v.Kind() == reflect.Slice {
					out = reflect.MakeSlice(v.Type(), v.Len(), v.Len())
					reflect.Copy(out, v)
				} else {
					out = reflect.New(v.Type()).Elem()
					out.Set(v)
				}
			}
			out.Index(i).Set(e)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Map:
		var out reflect.Value
		iter := v.MapRange()
		for iter.Next() {
			e, changed := r.value(iter.Value(), depth+1)
			if !changed {
				continue
			}
			if !out.IsValid() {
				out = reflect.MakeMapWithSize(v.Type(), v.Len())
				copyIter := v.MapRange()
				for copyIter.Next() {
					out.SetMapIndex(copyIter.Key(), copyIter.Value())
				}
			}
			out.SetMapIndex(iter.Key(), e)
		}
		if out.IsValid() {
			return out, true
		}
	case reflect.Pointer:
		if v.IsNil() {
			return v, false
		}
		e, changed := r.value(v.Elem(), depth+1)
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type().Elem())
		out.Elem().Set(e)
		return out, true
	case reflect.Interface:
		if v.IsNil() {
			return v, false
		}
		e, changed := r.value(v.Elem(), depth+1)
		if !changed {
			return v, false
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(e)
		return out, true
	}
	return v, false
}
