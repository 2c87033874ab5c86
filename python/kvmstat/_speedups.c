/*
 * _speedups.c - the hot paths of kvmstat's object layer in C: a base class
 * for kvmstat.Object holding its six fields, with member access
 * (member_, attribute lookup) and scalar reads (value_) done here, and
 * everything else left to the Python class above it (_object.py), which
 * also does all of this when the module is not built.
 *
 * It reads kernel memory through the library's kvs_read, whose address and
 * handle the Program gives (prog._cread, prog._kd), so it links against
 * nothing but Python.  Types stay Python objects (_object.Type); the
 * caches they keep (_pk: the peeled type, _tpk: a pointer's peeled target,
 * _mc: member name -> (offset, type, bit, bits)) are filled by their
 * Python methods on a miss and read here on a hit.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

typedef int (*kvs_read_fn)(void *kd, uint64_t kva, void *buf, size_t len);

typedef struct {
	PyObject_HEAD
	PyObject *prog;
	PyObject *type;
	PyObject *address;      /* int or None */
	PyObject *value;        /* a held value, or None */
	PyObject *bit_offset;   /* int */
	PyObject *bit_field_size; /* int or None */
	/* caches, filled on first use: the Program's kvs_read and handle, and
	 * how this object's (peeled) type reads: kc KC_*, size, signedness */
	kvs_read_fn rd;
	void *kd;
	int kc, sz, sg;
} ObjectBase;

enum { KC_UNKNOWN = -1, KC_OTHER = 0, KC_INT, KC_BOOL, KC_POINTER, KC_SOU };

/* Interned names and the TypeKind members, set at import. */
static PyObject *s_pk, *s_tpk, *s_mc, *s_peeled, *s_target_peeled, *s_mref, *s_kind,
    *s_size, *s_is_signed, *s_cread, *s_kd, *s_fault, *s_value_py, *s_member_py;
static PyObject *k_pointer, *k_struct, *k_union, *k_int, *k_enum, *k_bool;

static void
ob_dealloc(ObjectBase *o)
{
	PyObject_GC_UnTrack(o);
	Py_CLEAR(o->prog);
	Py_CLEAR(o->type);
	Py_CLEAR(o->address);
	Py_CLEAR(o->value);
	Py_CLEAR(o->bit_offset);
	Py_CLEAR(o->bit_field_size);
	Py_TYPE(o)->tp_free((PyObject *)o);
}

static int
ob_traverse(ObjectBase *o, visitproc visit, void *arg)
{
	Py_VISIT(o->prog);
	Py_VISIT(o->type);
	Py_VISIT(o->address);
	Py_VISIT(o->value);
	Py_VISIT(o->bit_offset);
	Py_VISIT(o->bit_field_size);
	return 0;
}

static int
ob_clear(ObjectBase *o)
{
	Py_CLEAR(o->prog);
	Py_CLEAR(o->type);
	Py_CLEAR(o->address);
	Py_CLEAR(o->value);
	Py_CLEAR(o->bit_offset);
	Py_CLEAR(o->bit_field_size);
	return 0;
}

static PyObject *
ob_new(PyTypeObject *tp, PyObject *args, PyObject *kw)
{
	ObjectBase *o = (ObjectBase *)tp->tp_alloc(tp, 0);

	(void)args;
	(void)kw;
	if (o == NULL)
		return NULL;
	o->address = Py_NewRef(Py_None);
	o->value = Py_NewRef(Py_None);
	o->bit_offset = PyLong_FromLong(0);
	o->bit_field_size = Py_NewRef(Py_None);
	o->prog = Py_NewRef(Py_None);
	o->type = Py_NewRef(Py_None);
	o->rd = NULL;
	o->kd = NULL;
	o->kc = KC_UNKNOWN;
	if (o->bit_offset == NULL) {
		Py_DECREF(o);
		return NULL;
	}
	return (PyObject *)o;
}

static PyObject *s_wrap, *s_wrapper, *s_init_py, *type_class;

/*
 * Object(prog, type, value=None, *, address=None, ...): a Type and an
 * address, or a Type and an int value that its cached wrap (mask, sign)
 * says how to hold, here; every other form in Python (_init_py).
 */
static int
ob_init(PyObject *self, PyObject *args, PyObject *kw)
{
	ObjectBase *o = (ObjectBase *)self;
	PyObject *prog, *type, *value = Py_None, *address = Py_None, *w, *r;
	Py_ssize_t na = PyTuple_GET_SIZE(args), nk = kw != NULL ? PyDict_GET_SIZE(kw) : 0;

	if (type_class == NULL || na < 2 || na > 3 || nk > 1)
		goto slow;
	prog = PyTuple_GET_ITEM(args, 0);
	type = PyTuple_GET_ITEM(args, 1);
	if ((PyObject *)Py_TYPE(type) != type_class)
		goto slow;
	if (na == 3)
		value = PyTuple_GET_ITEM(args, 2);
	if (nk == 1) {
		PyObject *k, *v;
		Py_ssize_t pos = 0;
		PyDict_Next(kw, &pos, &k, &v);
		if (PyUnicode_CompareWithASCIIString(k, "address") == 0 && na == 2)
			address = v;
		else if (PyUnicode_CompareWithASCIIString(k, "value") == 0 && na == 2)
			value = v;
		else
			goto slow;
	}
	if (address != Py_None) {
		if (!PyLong_CheckExact(address) || value != Py_None)
			goto slow;
		Py_SETREF(o->prog, Py_NewRef(prog));
		Py_SETREF(o->type, Py_NewRef(type));
		Py_SETREF(o->address, Py_NewRef(address));
		Py_SETREF(o->value, Py_NewRef(Py_None));
		return 0;
	}
	if (!PyLong_CheckExact(value))
		goto slow;
	if ((w = PyObject_GetAttr(type, s_wrap)) == NULL)
		return -1;
	if (w == Py_None) {
		Py_DECREF(w);
		if ((w = PyObject_CallMethodNoArgs(type, s_wrapper)) == NULL)
			return -1;
	}
	if (!PyTuple_Check(w) || PyTuple_GET_SIZE(w) != 2) {
		Py_DECREF(w);
		goto slow;
	}
	{
		/* value & mask, less 2^bits when the sign bit is set */
		PyObject *masked = PyNumber_And(value, PyTuple_GET_ITEM(w, 0)), *sb;
		int neg = 0;
		if (masked == NULL) {
			Py_DECREF(w);
			return -1;
		}
		sb = PyNumber_And(masked, PyTuple_GET_ITEM(w, 1));
		if (sb == NULL || (neg = PyObject_IsTrue(sb)) < 0) {
			Py_XDECREF(sb);
			Py_DECREF(masked);
			Py_DECREF(w);
			return -1;
		}
		Py_DECREF(sb);
		if (neg) {
			PyObject *one = PyLong_FromLong(1), *span, *v2;
			span = one != NULL ? PyNumber_Add(PyTuple_GET_ITEM(w, 0), one) : NULL;
			v2 = span != NULL ? PyNumber_Subtract(masked, span) : NULL;
			Py_XDECREF(one);
			Py_XDECREF(span);
			Py_DECREF(masked);
			if (v2 == NULL) {
				Py_DECREF(w);
				return -1;
			}
			masked = v2;
		}
		Py_DECREF(w);
		Py_SETREF(o->prog, Py_NewRef(prog));
		Py_SETREF(o->type, Py_NewRef(type));
		Py_SETREF(o->address, Py_NewRef(Py_None));
		Py_SETREF(o->value, masked);
	}
	return 0;
slow:
	{
		PyObject *f = PyObject_GetAttr(self, s_init_py);
		if (f == NULL)
			return -1;
		r = PyObject_Call(f, args, kw);
		Py_DECREF(f);
	}
	if (r == NULL)
		return -1;
	Py_DECREF(r);
	return 0;
}

/* A type's cached attribute, or the method that fills it (new reference). */
static PyObject *
cached(PyObject *t, PyObject *attr, PyObject *filler)
{
	PyObject *v = PyObject_GetAttr(t, attr);

	if (v == NULL)
		return NULL;
	if (v != Py_None)
		return v;
	Py_DECREF(v);
	return PyObject_CallMethodNoArgs(t, filler);
}

/* Read an integer of size bytes at addr through the Program's kvs_read:
 * a new int, or NULL with the Program's FaultError raised. */
static PyObject *
read_int(PyObject *prog, uint64_t addr, Py_ssize_t size, int is_signed)
{
	PyObject *p, *k;
	kvs_read_fn rd;
	void *kd;
	uint8_t buf[8];
	uint64_t v = 0;

	if (size <= 0 || size > 8 || (size & (size - 1)) != 0)
		return NULL;            /* caller falls back to Python */
	if ((p = PyObject_GetAttr(prog, s_cread)) == NULL)
		return NULL;
	rd = (kvs_read_fn)PyLong_AsVoidPtr(p);
	Py_DECREF(p);
	if ((k = PyObject_GetAttr(prog, s_kd)) == NULL)
		return NULL;
	kd = PyLong_AsVoidPtr(k);
	Py_DECREF(k);
	if (PyErr_Occurred())
		return NULL;
	if (rd(kd, addr, buf, (size_t)size) != 0) {
		PyObject *a = PyLong_FromUnsignedLongLong(addr), *err;
		if (a == NULL)
			return NULL;
		err = PyObject_CallMethodOneArg(prog, s_fault, a);
		Py_DECREF(a);
		if (err != NULL) {
			PyErr_SetObject((PyObject *)Py_TYPE(err), err);
			Py_DECREF(err);
		}
		return NULL;
	}
	memcpy(&v, buf, (size_t)size);       /* little-endian host, as the kernels */
	if (is_signed) {
		int shift = 64 - 8 * (int)size;
		return PyLong_FromLongLong((int64_t)(v << shift) >> shift);
	}
	return PyLong_FromUnsignedLongLong(v);
}

/* The object's read path (its Program's kvs_read) and how its type reads:
 * 0, or -1 with an exception. */
static int
prep(ObjectBase *o)
{
	if (o->rd == NULL) {
		PyObject *p = PyObject_GetAttr(o->prog, s_cread), *k;
		if (p == NULL)
			return -1;
		o->rd = (kvs_read_fn)PyLong_AsVoidPtr(p);
		Py_DECREF(p);
		if ((k = PyObject_GetAttr(o->prog, s_kd)) == NULL)
			return -1;
		o->kd = PyLong_AsVoidPtr(k);
		Py_DECREF(k);
		if (PyErr_Occurred())
			return -1;
	}
	if (o->kc == KC_UNKNOWN) {
		PyObject *t = cached(o->type, s_pk, s_peeled), *kind, *size, *sg;
		if (t == NULL)
			return -1;
		kind = PyObject_GetAttr(t, s_kind);
		size = PyObject_GetAttr(t, s_size);
		sg = PyObject_GetAttr(t, s_is_signed);
		Py_DECREF(t);
		if (kind == NULL || size == NULL || sg == NULL) {
			Py_XDECREF(kind);
			Py_XDECREF(size);
			Py_XDECREF(sg);
			return -1;
		}
		o->kc = kind == k_int || kind == k_enum ? KC_INT : kind == k_bool ? KC_BOOL :
		    kind == k_pointer ? KC_POINTER : kind == k_struct || kind == k_union ? KC_SOU :
		    KC_OTHER;
		o->sz = size == Py_None ? 0 : (int)PyLong_AsLong(size);
		o->sg = PyObject_IsTrue(sg) == 1;
		Py_DECREF(kind);
		Py_DECREF(size);
		Py_DECREF(sg);
		if (PyErr_Occurred())
			return -1;
	}
	return 0;
}

/* value_(): scalars of reference objects here, the rest in Python. */
static PyObject *
ob_value(ObjectBase *o, PyObject *unused)
{
	PyObject *t, *kind, *size, *sg, *r;
	Py_ssize_t n;
	int is_signed;

	(void)unused;
	if (o->address == Py_None || o->bit_field_size != Py_None)
		return PyObject_CallMethodNoArgs((PyObject *)o, s_value_py);
	if (prep(o) != 0)
		return NULL;
	if ((o->kc == KC_INT || o->kc == KC_POINTER || o->kc == KC_BOOL) && o->sz > 0 &&
	    o->sz <= 8 && (o->sz & (o->sz - 1)) == 0) {
		uint64_t addr = PyLong_AsUnsignedLongLong(o->address), v = 0;
		uint8_t buf[8];
		if (PyErr_Occurred())
			return NULL;
		if (o->rd(o->kd, addr, buf, (size_t)o->sz) == 0) {
			memcpy(&v, buf, (size_t)o->sz);
			if (o->kc == KC_BOOL)
				return PyBool_FromLong(v != 0);
			if (o->sg) {
				int shift = 64 - 8 * o->sz;
				return PyLong_FromLongLong((int64_t)(v << shift) >> shift);
			}
			return PyLong_FromUnsignedLongLong(v);
		}
		/* a fault: the path below raises the Program's FaultError */
	}
	if ((t = cached(o->type, s_pk, s_peeled)) == NULL)
		return NULL;
	if ((kind = PyObject_GetAttr(t, s_kind)) == NULL) {
		Py_DECREF(t);
		return NULL;
	}
	Py_DECREF(kind);                /* a TypeKind member: compared by identity */
	if (kind != k_int && kind != k_pointer && kind != k_enum && kind != k_bool) {
		Py_DECREF(t);
		return PyObject_CallMethodNoArgs((PyObject *)o, s_value_py);
	}
	size = PyObject_GetAttr(t, s_size);
	sg = PyObject_GetAttr(t, s_is_signed);
	Py_DECREF(t);
	if (size == NULL || sg == NULL) {
		Py_XDECREF(size);
		Py_XDECREF(sg);
		return NULL;
	}
	n = size == Py_None ? 0 : PyLong_AsSsize_t(size);
	is_signed = PyObject_IsTrue(sg);
	Py_DECREF(size);
	Py_DECREF(sg);
	if (PyErr_Occurred() || is_signed < 0)
		return NULL;
	{
		uint64_t addr = PyLong_AsUnsignedLongLong(o->address);
		if (PyErr_Occurred())
			return NULL;
		r = read_int(o->prog, addr, n, is_signed);
	}
	if (r == NULL) {
		if (PyErr_Occurred())
			return NULL;
		return PyObject_CallMethodNoArgs((PyObject *)o, s_value_py);
	}
	if (kind == k_bool) {
		PyObject *b = PyBool_FromLong(PyObject_IsTrue(r));
		Py_DECREF(r);
		return b;
	}
	return r;
}

/* member_(name): a hit in the struct's member cache is done here. */
static PyObject *
ob_member(ObjectBase *o, PyObject *name)
{
	PyObject *t, *kind, *base, *mc, *ref, *res = NULL;
	ObjectBase *m;

	if ((t = cached(o->type, s_pk, s_peeled)) == NULL)
		return NULL;
	if ((kind = PyObject_GetAttr(t, s_kind)) == NULL)
		goto out_t;
	Py_DECREF(kind);
	if (kind == k_pointer) {
		PyObject *tt = cached(t, s_tpk, s_target_peeled);
		if (tt == NULL)
			goto out_t;
		if ((base = ob_value(o, NULL)) == NULL) {
			Py_DECREF(tt);
			goto out_t;
		}
		Py_DECREF(t);
		t = tt;
		if ((kind = PyObject_GetAttr(t, s_kind)) == NULL) {
			Py_DECREF(base);
			goto out_t;
		}
		Py_DECREF(kind);
	} else
		base = Py_NewRef(o->address);
	if ((kind != k_struct && kind != k_union) || base == Py_None) {
		Py_DECREF(base);
		Py_DECREF(t);
		return PyObject_CallMethodOneArg((PyObject *)o, s_member_py, name);
	}
	if ((mc = PyObject_GetAttr(t, s_mc)) == NULL)
		goto out_base;
	ref = PyDict_GetItemWithError(mc, name);          /* borrowed */
	Py_DECREF(mc);
	if (ref == NULL) {
		if (PyErr_Occurred())
			goto out_base;
		if ((ref = PyObject_CallMethodOneArg(t, s_mref, name)) == NULL)
			goto out_base;
	} else
		Py_INCREF(ref);
	if (!PyTuple_Check(ref) || PyTuple_GET_SIZE(ref) != 4) {
		Py_DECREF(ref);
		PyErr_SetString(PyExc_TypeError, "bad member cache entry");
		goto out_base;
	}
	m = (ObjectBase *)ob_new(Py_TYPE(o), NULL, NULL);
	if (m == NULL) {
		Py_DECREF(ref);
		goto out_base;
	}
	Py_SETREF(m->prog, Py_NewRef(o->prog));
	Py_SETREF(m->type, Py_NewRef(PyTuple_GET_ITEM(ref, 1)));
	m->rd = o->rd;
	m->kd = o->kd;
	Py_SETREF(m->address, PyNumber_Add(base, PyTuple_GET_ITEM(ref, 0)));
	if (PyTuple_GET_ITEM(ref, 2) != Py_None)
		Py_SETREF(m->bit_offset, Py_NewRef(PyTuple_GET_ITEM(ref, 2)));
	Py_SETREF(m->bit_field_size, Py_NewRef(PyTuple_GET_ITEM(ref, 3)));
	Py_DECREF(ref);
	if (m->address == NULL) {
		Py_DECREF(m);
		goto out_base;
	}
	res = (PyObject *)m;
out_base:
	Py_DECREF(base);
out_t:
	Py_DECREF(t);
	return res;
}

/* obj.name: the object's own attributes first, then its members. */
static PyObject *
ob_getattro(PyObject *self, PyObject *name)
{
	PyObject *m;
	Py_ssize_t n;
	const char *s;

	/* A name the class has (a method, a field) is the class's: the usual
	 * lookup; any other is a member, without the failed lookup's cost. */
	if (_PyType_Lookup(Py_TYPE(self), name) != NULL)
		return PyObject_GenericGetAttr(self, name);
	s = PyUnicode_AsUTF8AndSize(name, &n);
	if (s == NULL)
		return NULL;
	if (n >= 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_')
		return PyObject_GenericGetAttr(self, name);     /* dunders: as Python */
	m = ob_member((ObjectBase *)self, name);
	if (m == NULL && (PyErr_ExceptionMatches(PyExc_LookupError) ||
	    PyErr_ExceptionMatches(PyExc_TypeError))) {
		PyObject *type, *value, *tb, *msg;
		PyErr_Fetch(&type, &value, &tb);
		msg = value != NULL ? PyObject_Str(value) : NULL;
		PyErr_SetObject(PyExc_AttributeError, msg != NULL ? msg : name);
		Py_XDECREF(msg);
		Py_XDECREF(type);
		Py_XDECREF(value);
		Py_XDECREF(tb);
	}
	return m;
}

static PyMemberDef ob_members[] = {
	{ "prog_", T_OBJECT_EX, offsetof(ObjectBase, prog), 0, "the Program" },
	{ "type_", T_OBJECT_EX, offsetof(ObjectBase, type), 0, "the object's Type" },
	{ "address_", T_OBJECT_EX, offsetof(ObjectBase, address), 0,
	  "where it lies in kernel memory, or None (a value)" },
	{ "_value", T_OBJECT_EX, offsetof(ObjectBase, value), 0, NULL },
	{ "bit_offset_", T_OBJECT_EX, offsetof(ObjectBase, bit_offset), 0, NULL },
	{ "bit_field_size_", T_OBJECT_EX, offsetof(ObjectBase, bit_field_size), 0, NULL },
	{ NULL, 0, 0, 0, NULL },
};

static PyMethodDef ob_methods[] = {
	{ "value_", (PyCFunction)ob_value, METH_NOARGS, "the object's value" },
	{ "member_", (PyCFunction)ob_member, METH_O, "the member named name" },
	{ NULL, NULL, 0, NULL },
};

static PyTypeObject ObjectBaseType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "kvmstat._speedups.ObjectBase",
	.tp_basicsize = sizeof(ObjectBase),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "kvmstat.Object's fields and hot paths",
	.tp_new = ob_new,
	.tp_dealloc = (destructor)ob_dealloc,
	.tp_traverse = (traverseproc)ob_traverse,
	.tp_clear = (inquiry)ob_clear,
	.tp_getattro = ob_getattro,
	.tp_init = ob_init,
	.tp_members = ob_members,
	.tp_methods = ob_methods,
};

/* setup(TypeKind, Type): the kinds compared by identity, and the class of
 * types the fast constructor takes. */
static PyObject *
setup(PyObject *mod, PyObject *args)
{
	PyObject *kinds, *tc;
	static const struct { PyObject **slot; const char *name; } want[] = {
		{ &k_pointer, "POINTER" }, { &k_struct, "STRUCT" }, { &k_union, "UNION" },
		{ &k_int, "INT" }, { &k_enum, "ENUM" }, { &k_bool, "BOOL" },
	};
	size_t i;

	(void)mod;
	if (!PyArg_ParseTuple(args, "OO", &kinds, &tc))
		return NULL;
	Py_XSETREF(type_class, Py_NewRef(tc));
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		PyObject *v = PyObject_GetAttrString(kinds, want[i].name);
		if (v == NULL)
			return NULL;
		Py_XSETREF(*want[i].slot, v);
	}
	Py_RETURN_NONE;
}

/*
 * walk(prog, first, next_off, stop, limit): the addresses of a linked
 * list's nodes, read as words: first, then the word at node + next_off,
 * until stop (a list's head) or 0; more than limit nodes raises (a cycle).
 */
static PyObject *
walk(PyObject *mod, PyObject *args)
{
	PyObject *prog, *p, *k, *out;
	unsigned long long first, off, stop, limit, pos, n = 0;
	kvs_read_fn rd;
	void *kd;

	(void)mod;
	if (!PyArg_ParseTuple(args, "OKKKK", &prog, &first, &off, &stop, &limit))
		return NULL;
	if ((p = PyObject_GetAttr(prog, s_cread)) == NULL)
		return NULL;
	rd = (kvs_read_fn)PyLong_AsVoidPtr(p);
	Py_DECREF(p);
	if ((k = PyObject_GetAttr(prog, s_kd)) == NULL)
		return NULL;
	kd = PyLong_AsVoidPtr(k);
	Py_DECREF(k);
	if (PyErr_Occurred() || (out = PyList_New(0)) == NULL)
		return NULL;
	for (pos = first; pos != stop && pos != 0; ) {
		PyObject *v;
		uint64_t nx;
		if (++n > limit) {
			Py_DECREF(out);
			PyErr_Format(PyExc_RuntimeError, "list at 0x%llx does not end", stop);
			return NULL;
		}
		if ((v = PyLong_FromUnsignedLongLong(pos)) == NULL || PyList_Append(out, v) != 0) {
			Py_XDECREF(v);
			Py_DECREF(out);
			return NULL;
		}
		Py_DECREF(v);
		if (rd(kd, pos + off, &nx, 8) != 0) {
			PyObject *a = PyLong_FromUnsignedLongLong(pos + off), *err;
			Py_DECREF(out);
			if (a == NULL)
				return NULL;
			err = PyObject_CallMethodOneArg(prog, s_fault, a);
			Py_DECREF(a);
			if (err != NULL) {
				PyErr_SetObject((PyObject *)Py_TYPE(err), err);
				Py_DECREF(err);
			}
			return NULL;
		}
		pos = nx;
	}
	return out;
}

static PyMethodDef mod_methods[] = {
	{ "walk", walk, METH_VARARGS, "walk(prog, first, next_off, stop, limit): node addresses" },
	{ "setup", setup, METH_VARARGS, "setup(TypeKind, Type): before any object" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef mod_def = {
	PyModuleDef_HEAD_INIT, "_speedups", "kvmstat's object layer, hot paths in C", -1,
	mod_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__speedups(void)
{
	static const struct { PyObject **slot; const char *s; } names[] = {
		{ &s_pk, "_pk" }, { &s_tpk, "_tpk" }, { &s_mc, "_mc" }, { &s_peeled, "_peeled" },
		{ &s_target_peeled, "_target_peeled" }, { &s_mref, "_mref" }, { &s_kind, "kind" },
		{ &s_size, "size" }, { &s_is_signed, "is_signed" }, { &s_cread, "_cread" },
		{ &s_kd, "_kd" }, { &s_fault, "_fault" }, { &s_value_py, "_value_py" },
		{ &s_member_py, "_member_py" }, { &s_wrap, "_wrap" }, { &s_wrapper, "_wrapper" },
		{ &s_init_py, "_init_py" },
	};
	PyObject *m;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((*names[i].slot = PyUnicode_InternFromString(names[i].s)) == NULL)
			return NULL;
	if (PyType_Ready(&ObjectBaseType) < 0)
		return NULL;
	if ((m = PyModule_Create(&mod_def)) == NULL)
		return NULL;
	Py_INCREF(&ObjectBaseType);
	if (PyModule_AddObject(m, "ObjectBase", (PyObject *)&ObjectBaseType) < 0) {
		Py_DECREF(&ObjectBaseType);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
