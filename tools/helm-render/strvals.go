package main

// A port of Helm 3's pkg/strvals parser (the --set / --set-string syntax),
// without the --set-json and --set-file readers. Keeping the same structure
// keeps the same corner cases: `a.b=c`, `a[0].b=c`, `a={x,y}`, `a=b,c=d`,
// `\,` and `\.` escapes, and Helm's typing of true/false/null/integers.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

var errNotList = errors.New("not a list")

const (
	maxIndex           = 65536 // strvals.MaxIndex
	maxNestedNameLevel = 30    // strvals.MaxNestedNameLevel
)

type strvalsParser struct {
	sc         *bytes.Buffer
	data       map[string]interface{}
	stringOnly bool // --set-string: never convert to bool/int/null
}

// parseSetInto parses one --set (or --set-string) argument into dest,
// exactly like strvals.ParseInto / strvals.ParseIntoString.
func parseSetInto(s string, dest map[string]interface{}, stringOnly bool) error {
	p := &strvalsParser{sc: bytes.NewBufferString(s), data: dest, stringOnly: stringOnly}
	for {
		err := p.key(p.data, 0)
		if err == nil {
			continue
		}
		if err == io.EOF {
			return nil
		}
		return err
	}
}

func (t *strvalsParser) key(data map[string]interface{}, nestedNameLevel int) (reterr error) {
	defer func() {
		if r := recover(); r != nil {
			reterr = fmt.Errorf("unable to parse key: %s", r)
		}
	}()
	for {
		k, last, err := runesUntil(t.sc, "=[,.")
		switch {
		case err != nil:
			if len(k) == 0 {
				return err
			}
			return fmt.Errorf("key %q has no value", string(k))
		case last == '[':
			i, err := t.keyIndex()
			if err != nil {
				return fmt.Errorf("error parsing index: %w", err)
			}
			kk := string(k)
			list := []interface{}{}
			if _, ok := data[kk]; ok {
				list = data[kk].([]interface{}) // panics (→ error) on a non-list, as Helm
			}
			list, err = t.listItem(list, i, nestedNameLevel)
			set(data, kk, list)
			return err
		case last == '=':
			v, e := t.value()
			if e != nil && e != io.EOF {
				return e
			}
			set(data, string(k), v)
			return e
		case last == ',':
			set(data, string(k), "")
			return fmt.Errorf("key %q has no value (cannot end with ,)", string(k))
		case last == '.':
			nestedNameLevel++
			if nestedNameLevel > maxNestedNameLevel {
				return fmt.Errorf("value name nested level is greater than maximum supported nested level of %d", maxNestedNameLevel)
			}
			inner := map[string]interface{}{}
			if _, ok := data[string(k)]; ok {
				inner = data[string(k)].(map[string]interface{})
			}
			e := t.key(inner, nestedNameLevel)
			if e == nil && len(inner) == 0 {
				return fmt.Errorf("key map %q has no value", string(k))
			}
			if len(inner) != 0 {
				set(data, string(k), inner)
			}
			return e
		}
	}
}

func set(data map[string]interface{}, key string, val interface{}) {
	if len(key) == 0 {
		return
	}
	data[key] = val
}

func setIndex(list []interface{}, index int, val interface{}) ([]interface{}, error) {
	if index < 0 {
		return list, fmt.Errorf("negative %d index not allowed", index)
	}
	if index > maxIndex {
		return list, fmt.Errorf("index of %d is greater than maximum supported index of %d", index, maxIndex)
	}
	if len(list) <= index {
		newlist := make([]interface{}, index+1)
		copy(newlist, list)
		list = newlist
	}
	list[index] = val
	return list, nil
}

func (t *strvalsParser) keyIndex() (int, error) {
	v, _, err := runesUntil(t.sc, "]")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

func (t *strvalsParser) listItem(list []interface{}, i, nestedNameLevel int) ([]interface{}, error) {
	if i < 0 {
		return list, fmt.Errorf("negative %d index not allowed", i)
	}
	k, last, err := runesUntil(t.sc, "[.=")
	switch {
	case len(k) > 0:
		return list, fmt.Errorf("unexpected data at end of array index: %q", k)
	case err != nil:
		return list, err
	case last == '=':
		v, e := t.value()
		if e != nil && e != io.EOF {
			return list, e
		}
		return setIndex(list, i, v)
	case last == '[':
		nextI, err := t.keyIndex()
		if err != nil {
			return list, fmt.Errorf("error parsing index: %w", err)
		}
		var crtList []interface{}
		if len(list) > i && list[i] != nil {
			crtList = list[i].([]interface{})
		}
		list2, err := t.listItem(crtList, nextI, nestedNameLevel)
		if err != nil {
			return list, err
		}
		return setIndex(list, i, list2)
	case last == '.':
		inner := map[string]interface{}{}
		if len(list) > i {
			var ok bool
			if inner, ok = list[i].(map[string]interface{}); !ok {
				inner = map[string]interface{}{}
				list[i] = inner
			}
		}
		if e := t.key(inner, nestedNameLevel); e != nil {
			return list, e
		}
		return setIndex(list, i, inner)
	default:
		return nil, fmt.Errorf("parse error: unexpected token %v", last)
	}
}

// value reads what follows '=': a `{a,b}` list or one scalar up to ','.
// io.EOF (an empty value at the end of the input) still comes with "" to set.
func (t *strvalsParser) value() (interface{}, error) {
	vl, e := t.valList()
	switch e {
	case nil:
		return vl, nil
	case io.EOF:
		return "", e
	case errNotList:
		rs, _, _ := runesUntil(t.sc, ",") // a scalar may end the input: not an error
		return t.typed(rs), nil
	}
	return nil, e
}

// valList parses `{a,b,c}` list syntax; errNotList when the value is not one.
func (t *strvalsParser) valList() ([]interface{}, error) {
	r, _, e := t.sc.ReadRune()
	if e != nil {
		return []interface{}{}, e
	}
	if r != '{' {
		_ = t.sc.UnreadRune()
		return []interface{}{}, errNotList
	}
	list := []interface{}{}
	for {
		rs, last, err := runesUntil(t.sc, ",}")
		switch {
		case err != nil:
			if err == io.EOF {
				err = errors.New("list must terminate with '}'")
			}
			return list, err
		case last == '}':
			// If this is followed by ',', consume it.
			if r, _, e := t.sc.ReadRune(); e == nil && r != ',' {
				_ = t.sc.UnreadRune()
			}
			return append(list, t.typed(rs)), nil
		case last == ',':
			list = append(list, t.typed(rs))
		}
	}
}

// runesUntil reads up to one of the stop runes, honouring backslash escapes.
func runesUntil(in io.RuneReader, stop string) ([]rune, rune, error) {
	v := []rune{}
	for {
		r, _, e := in.ReadRune()
		switch {
		case e != nil:
			return v, r, e
		case strings.ContainsRune(stop, r):
			return v, r, nil
		case r == '\\':
			next, _, e := in.ReadRune()
			if e != nil {
				return v, next, e
			}
			v = append(v, next)
		default:
			v = append(v, r)
		}
	}
}

// typed mirrors strvals.typedVal: true/false/null (any case), "0", and
// integers without a leading zero become typed; everything else stays a string.
func (t *strvalsParser) typed(v []rune) interface{} {
	val := string(v)
	if t.stringOnly {
		return val
	}
	switch {
	case strings.EqualFold(val, "true"):
		return true
	case strings.EqualFold(val, "false"):
		return false
	case strings.EqualFold(val, "null"):
		return nil
	case val == "0":
		return int64(0)
	}
	if len(val) != 0 && val[0] != '0' {
		if iv, err := strconv.ParseInt(val, 10, 64); err == nil {
			return iv
		}
	}
	return val
}
