// RFC 8291's per-message key agreement for sender-webpush: a fresh P-256 key pair and
// ECDH with the subscription's p256dh key, in OpenSSL, the one that Node itself links
// (its headers ship with Node; its symbols resolve from the running node binary).
//
// Written by hand because no library serves: Node's ECDH.computeSecret() first re-checks
// the context's own key pair with EC_KEY_check_key() (IsKeyPairValid() in Node's
// src/crypto/crypto_ec.cc), two more scalar multiplications per message, as costly as the
// agreement itself; Node's diffieHellman() on KeyObjects has no such check, but turning
// the subscriber's raw key into a KeyObject costs as much again; the npm libraries of
// P-256 (elliptic, @noble/curves) are JavaScript, 3.5 to 6 ms a message where Node's
// own takes ~0.2. Here a message costs one key generation (fixed base) and one agreement
// (variable base), about half of Node's createECDH route (README, Benchmarks, "Web
// Push"). The peer's point is still validated: EC_POINT_oct2point
// refuses a point that is not on the curve, and P-256's cofactor is 1, so every point on
// it is in the prime-order group (NIST SP 800-56A's partial validation is full here).
//
// One state per JavaScript realm (napi_set_instance_data): each worker thread of the
// sender has its own, so nothing here is shared between threads.
#define OPENSSL_SUPPRESS_DEPRECATED
#include <node_api.h>
#include <openssl/ec.h>
#include <openssl/ecdh.h>
#include <openssl/obj_mac.h>
#include <stdlib.h>

#define POINT_LENGTH 65
#define SECRET_LENGTH 32

enum { AGREED = 0, INVALID_PEER = 1, FAILED = 2 };

typedef struct {
  EC_KEY *key;
  const EC_GROUP *group;
  EC_POINT *peer;
  BN_CTX *bn;
} state_t;

static void free_state(napi_env env, void *data, void *hint) {
  state_t *s = data;
  (void)env;
  (void)hint;
  EC_POINT_free(s->peer);
  EC_KEY_free(s->key);
  BN_CTX_free(s->bn);
  free(s);
}

// The bytes of a Buffer argument and their count; 0 when the value is no Buffer.
static int buffer_of(napi_env env, napi_value value, unsigned char **data, size_t *length) {
  bool is_buffer = false;
  void *bytes = NULL;
  if (napi_is_buffer(env, value, &is_buffer) != napi_ok || !is_buffer) return 0;
  if (napi_get_buffer_info(env, value, &bytes, length) != napi_ok) return 0;
  *data = bytes;
  return 1;
}

// agree(subscriberPublic: Buffer, senderPublicOut: Buffer(65), secretOut: Buffer(32)):
// 0 agreed (both outputs written), 1 the subscriber's key is not a P-256 point, 2 OpenSSL
// failed otherwise. Throws a TypeError for arguments of the wrong kind or length.
static napi_value agree(napi_env env, napi_callback_info info) {
  size_t argc = 3;
  napi_value argv[3];
  state_t *s = NULL;
  napi_value result;
  unsigned char *peer, *public_out, *secret_out;
  size_t peer_length = 0, public_length = 0, secret_length = 0;
  int status;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, (void **)&s) != napi_ok || argc != 3) {
    napi_throw_type_error(env, NULL, "agree(subscriberPublic, senderPublicOut, secretOut)");
    return NULL;
  }
  if (!buffer_of(env, argv[0], &peer, &peer_length) || !buffer_of(env, argv[1], &public_out, &public_length) ||
      !buffer_of(env, argv[2], &secret_out, &secret_length) || public_length != POINT_LENGTH ||
      secret_length != SECRET_LENGTH) {
    napi_throw_type_error(env, NULL, "agree: a Buffer key and outputs of 65 and 32 bytes");
    return NULL;
  }
  // Only an uncompressed point (0x04 ‖ x ‖ y) is a p256dh key (RFC 8291 §3.1).
  if (peer_length != POINT_LENGTH || peer[0] != POINT_CONVERSION_UNCOMPRESSED ||
      !EC_POINT_oct2point(s->group, s->peer, peer, peer_length, s->bn)) {
    status = INVALID_PEER;
  } else if (EC_KEY_generate_key(s->key) &&
             EC_POINT_point2oct(s->group, EC_KEY_get0_public_key(s->key), POINT_CONVERSION_UNCOMPRESSED, public_out,
                                POINT_LENGTH, s->bn) == POINT_LENGTH &&
             ECDH_compute_key(secret_out, SECRET_LENGTH, s->peer, s->key, NULL) == SECRET_LENGTH) {
    status = AGREED;
  } else {
    status = FAILED;
  }
  napi_create_int32(env, status, &result);
  return result;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  state_t *s = calloc(1, sizeof *s);
  if (s == NULL) return NULL;
  s->key = EC_KEY_new_by_curve_name(NID_X9_62_prime256v1);
  s->group = s->key ? EC_KEY_get0_group(s->key) : NULL;
  s->peer = s->group ? EC_POINT_new(s->group) : NULL;
  s->bn = BN_CTX_new();
  if (s->peer == NULL || s->bn == NULL) {
    free_state(env, s, NULL);
    napi_throw_error(env, NULL, "p256-agree: OpenSSL could not set up P-256");
    return NULL;
  }
  if (napi_set_instance_data(env, s, free_state, NULL) != napi_ok ||
      napi_create_function(env, "agree", NAPI_AUTO_LENGTH, agree, s, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "agree", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
